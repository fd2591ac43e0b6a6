"""`image_view`: local files through the path policy, URLs from a real local server, Pillow checks."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from navi.tools.base import ToolResult
from navi.tools.builtin.image import ImageViewTool
from navi.tools.paths import PathPolicy
from tests.helpers.local_http import ALLOW_LOCAL, LocalHttpServer


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHttpServer]:
    with LocalHttpServer() as srv:
        yield srv


@pytest.fixture
def allowed(tmp_path: Path) -> Path:
    root = tmp_path / "allowed"
    root.mkdir()
    return root


@pytest.fixture
def tool(allowed: Path) -> ImageViewTool:
    return ImageViewTool(PathPolicy([str(allowed)]), guard=ALLOW_LOCAL)


def decoded(result: ToolResult) -> Image.Image:
    """The image the model would see, decoded from the result's base64."""
    assert result.success, result.error
    assert result.metadata["is_image"] is True
    img = Image.open(BytesIO(base64.b64decode(result.metadata["base64"])))
    assert (img.width, img.height) == (result.metadata["width"], result.metadata["height"])
    assert result.metadata["media_type"] == f"image/{img.format.lower()}"  # type: ignore[union-attr]
    return img


def photo(size: tuple[int, int]) -> Image.Image:
    """A smooth RGB picture (compresses like a photo, not like noise)."""
    img = Image.linear_gradient("L").resize(size).convert("RGB")
    ImageDraw.Draw(img).ellipse((size[0] // 4, size[1] // 4, size[0] // 2, size[1] // 2), fill=(20, 120, 220))
    return img


def save(img: Image.Image, path: Path, fmt: str, **kwargs: object) -> Path:
    img.save(path, fmt, **kwargs)
    return path


# --- local files -----------------------------------------------------------------------------------
async def test_big_jpeg_is_downsized_keeping_aspect(tool: ImageViewTool, allowed: Path) -> None:
    path = save(photo((4000, 3000)), allowed / "big.jpg", "JPEG", quality=90)
    result = await tool.execute({"source": str(path)})
    img = decoded(result)
    assert img.format == "JPEG"
    assert img.size == (1568, 1176)
    assert result.output.startswith("JPEG image 4000×3000 (")
    assert f"from {path}, resized to 1568×1176; shown as JPEG (" in result.output
    assert (result.metadata["original_width"], result.metadata["original_height"]) == (4000, 3000)
    assert img.getpixel((100, 10))[0] < 40  # the gradient's dark top survived resizing
    assert img.getpixel((100, 1160))[0] > 215  # and its light bottom
    assert img.getpixel((580, 440))[2] > 180  # the blue ellipse, scaled with the picture


async def test_portrait_png_is_downsized_and_stays_png(tool: ImageViewTool, allowed: Path) -> None:
    path = save(photo((1500, 2000)), allowed / "tall.png", "PNG")
    img = decoded(await tool.execute({"source": str(path)}))
    assert img.format == "PNG"  # lossless sources stay lossless: text in screenshots stays sharp
    assert img.size == (1176, 1568)
    assert img.mode == "RGB"


async def test_custom_max_side(allowed: Path) -> None:
    path = save(photo((400, 100)), allowed / "wide.png", "PNG")
    img = decoded(
        await ImageViewTool(PathPolicy([str(allowed)]), guard=ALLOW_LOCAL, max_side=200).execute(
            {"source": str(path)}
        )
    )
    assert img.size == (200, 50)


async def test_small_image_is_not_resized(tool: ImageViewTool, allowed: Path) -> None:
    path = save(photo((320, 200)), allowed / "small.png", "PNG")
    result = await tool.execute({"source": str(path)})
    assert decoded(result).size == (320, 200)
    assert "resized" not in result.output
    assert result.output.startswith("PNG image 320×200 (")


async def test_png_with_alpha_keeps_transparency(tool: ImageViewTool, allowed: Path) -> None:
    img = Image.new("RGBA", (3200, 1600), (255, 0, 0, 255))
    ImageDraw.Draw(img).rectangle((0, 0, 1599, 1599), fill=(0, 0, 0, 0))
    path = save(img, allowed / "alpha.png", "PNG")
    out = decoded(await tool.execute({"source": str(path)}))
    assert out.format == "PNG" and out.mode == "RGBA"
    assert out.size == (1568, 784)
    assert out.getpixel((100, 100))[3] == 0
    assert out.getpixel((1500, 700)) == (255, 0, 0, 255)


async def test_palette_gif_with_transparency_becomes_png(tool: ImageViewTool, allowed: Path) -> None:
    frames = []
    for color in [(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255)]:
        frame = Image.new("RGBA", (60, 40), (0, 0, 0, 0))
        ImageDraw.Draw(frame).rectangle((30, 0, 59, 39), fill=color)
        frames.append(frame)
    path = allowed / "anim.gif"
    frames[0].save(path, "GIF", save_all=True, append_images=frames[1:], duration=100, disposal=2)
    result = await tool.execute({"source": str(path)})
    img = decoded(result)
    assert img.format == "PNG" and img.mode == "RGBA"
    assert img.getpixel((5, 5))[3] == 0
    assert img.getpixel((40, 5)) == (255, 0, 0, 255)  # the first frame
    assert "GIF image 60×40" in result.output and "first of 3 frames" in result.output


async def test_noisy_png_too_large_as_png_is_sent_as_jpeg(tool: ImageViewTool, allowed: Path) -> None:
    noise = Image.frombytes("RGB", (1500, 1500), os.urandom(1500 * 1500 * 3))
    path = save(noise, allowed / "noise.png", "PNG")
    result = await tool.execute({"source": str(path)})
    img = decoded(result)
    assert img.format == "JPEG"
    assert img.size == (1500, 1500)
    assert len(base64.b64decode(result.metadata["base64"])) <= 3_500_000
    assert "PNG image 1500×1500" in result.output and "shown as JPEG (" in result.output


async def test_exif_orientation_is_applied(tool: ImageViewTool, allowed: Path) -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    path = save(photo((300, 200)), allowed / "rotated.jpg", "JPEG", exif=exif)
    result = await tool.execute({"source": str(path)})
    assert decoded(result).size == (200, 300)
    assert result.output.startswith("JPEG image 200×300")


async def test_relative_and_file_url_sources(tool: ImageViewTool, allowed: Path) -> None:
    path = save(photo((50, 40)), allowed / "rel.png", "PNG")
    os.chdir(allowed)
    relative = await ImageViewTool(PathPolicy([str(allowed)]), guard=ALLOW_LOCAL).execute(
        {"source": "rel.png"}
    )
    assert decoded(relative).size == (50, 40)
    file_url = await tool.execute({"source": f"file://{path}"})
    assert decoded(file_url).size == (50, 40)


async def test_text_file_named_png_is_refused(tool: ImageViewTool, allowed: Path) -> None:
    path = allowed / "fake.png"
    path.write_text("this is not an image at all\n")
    result = await tool.execute({"source": str(path)})
    assert not result.success
    assert result.error == (
        f"{path} is not a usable image: not an image format Pillow recognises "
        "(it looks like text; read it with the filesystem tool or web_view instead)"
    )


async def test_corrupt_and_empty_images_are_refused(tool: ImageViewTool, allowed: Path) -> None:
    good = BytesIO()
    photo((200, 200)).save(good, "PNG")
    broken = allowed / "broken.png"
    broken.write_bytes(good.getvalue()[: len(good.getvalue()) // 2])
    result = await tool.execute({"source": str(broken)})
    assert not result.success and "is not a usable image" in (result.error or "")
    empty = allowed / "empty.jpg"
    empty.write_bytes(b"")
    result = await tool.execute({"source": str(empty)})
    assert not result.success and (result.error or "").endswith("(the file is empty)")


async def test_path_outside_allowlist_is_refused(tool: ImageViewTool, allowed: Path, tmp_path: Path) -> None:
    outside = save(photo((20, 20)), tmp_path / "secret.png", "PNG")
    result = await tool.execute({"source": str(outside)})
    assert not result.success
    assert result.error == f"{outside} is outside the allowed paths ({allowed})"
    link = allowed / "sneaky.png"
    link.symlink_to(outside)
    via_link = await tool.execute({"source": str(link)})
    assert not via_link.success and "outside the allowed paths" in (via_link.error or "")
    dotdot = await tool.execute({"source": str(allowed / ".." / "secret.png")})
    assert not dotdot.success and "outside the allowed paths" in (dotdot.error or "")


async def test_missing_directory_and_oversized_files(allowed: Path) -> None:
    tool = ImageViewTool(PathPolicy([str(allowed)]), guard=ALLOW_LOCAL, max_bytes=1000)
    missing = await tool.execute({"source": str(allowed / "nope.png")})
    assert missing.error == f"{allowed / 'nope.png'} does not exist"
    directory = await tool.execute({"source": str(allowed)})
    assert directory.error == f"{allowed} is a directory, not an image file"
    big = save(Image.frombytes("RGB", (100, 100), os.urandom(30000)), allowed / "big.png", "PNG")
    too_big = await tool.execute({"source": str(big)})
    assert not too_big.success
    assert (too_big.error or "").endswith("over the 1000 B limit for images")


async def test_unsupported_schemes(tool: ImageViewTool) -> None:
    for source in ("ftp://example.com/a.png", "data:image/png;base64,AAAA"):
        result = await tool.execute({"source": source})
        assert not result.success
        assert "give a local path or an http(s) URL" in (result.error or "")


# --- URLs ----------------------------------------------------------------------------------------------
async def test_url_image(tool: ImageViewTool, server: LocalHttpServer) -> None:
    result = await tool.execute({"source": server("/image.png")})
    img = decoded(result)
    assert img.size == (40, 30)
    assert img.getpixel((5, 5)) == (200, 30, 30)
    assert f"PNG image 40×30 (101 B) from {server('/image.png')}; shown as PNG" in result.output


async def test_url_big_image_is_downsized(tool: ImageViewTool, server: LocalHttpServer) -> None:
    buf = BytesIO()
    photo((3000, 1000)).save(buf, "JPEG")
    url = server.add("wide.jpg", buf.getvalue(), "image/jpeg")
    img = decoded(await tool.execute({"source": url}))
    assert img.size == (1568, 523)


async def test_url_that_is_not_an_image(tool: ImageViewTool, server: LocalHttpServer) -> None:
    page = await tool.execute({"source": server("/article")})
    assert not page.success
    assert "is a web page (text/html), not an image; use web_view" in (page.error or "")
    pdf = await tool.execute({"source": server("/doc.pdf")})
    assert not pdf.success and "is not a usable image" in (pdf.error or "")
    text = await tool.execute({"source": server.add("fake.png", b"hello, not a png", "image/png")})
    assert not text.success and "it looks like text" in (text.error or "")


async def test_url_errors(allowed: Path, server: LocalHttpServer) -> None:
    tool = ImageViewTool(PathPolicy([str(allowed)]), guard=ALLOW_LOCAL, max_bytes=10_000)
    missing = await tool.execute({"source": server("/status/404")})
    assert missing.error == f"HTTP 404 Not Found fetching {server('/status/404')}"
    streamed = await tool.execute({"source": server("/huge?n=5000000&type=image/png")})
    assert (
        streamed.error
        == f"the image at {server('/huge?n=5000000&type=image/png')} is larger than the 9.8 KB limit"
    )
    declared = await tool.execute(
        {"source": server.add("large.png", b"\x89PNG" + bytes(20_000), "image/png")}
    )
    assert (declared.error or "").endswith("is larger than the 9.8 KB limit (19.5 KB)")
    loop = await tool.execute({"source": server("/loop")})
    assert "too many redirects" in (loop.error or "")


async def test_url_timeout(tool: ImageViewTool, server: LocalHttpServer) -> None:
    tool.fetch_timeout = 0.4
    result = await tool.execute({"source": server("/slow?delay=5")})
    assert (result.error or "").startswith("timed out after 0.4 s")
