"""Navi's VAPID key pair (RFC 8292): made on first start and kept in a 0600 file, like the token.

The browser binds each subscription to the public key it was made with (`applicationServerKey`),
so the key must outlive restarts: a new key would orphan every subscription. Two starts at once
cannot both write the file (O_EXCL); the loser reads the winner's key. The file holds the private
key as PKCS#8 PEM; the public key is derived from it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from navi.logging import get_logger
from navi.push.models import b64url

log = get_logger(__name__)


class VapidKeyError(Exception):
    """The key file cannot be read or written, or holds no P-256 private key."""


@dataclass(frozen=True)
class VapidKeys:
    private_pem: bytes
    path: Path | None = None

    @property
    def public_key(self) -> str:
        """The uncompressed P-256 public key, base64url: the page's `applicationServerKey`."""
        from cryptography.hazmat.primitives import serialization

        point = (
            self._private()
            .public_key()
            .public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        )
        return b64url(point)

    def signer(self) -> Any:
        """py_vapid's RFC 8292 signer (`Vapid02`) on this key."""
        from py_vapid import Vapid02

        return Vapid02.from_pem(self.private_pem)

    def _private(self) -> Any:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = serialization.load_pem_private_key(self.private_pem, password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
            raise VapidKeyError("the VAPID key is not a P-256 private key")
        return key

    @classmethod
    def generate(cls) -> VapidKeys:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return cls(pem)


def vapid_keys(path: Path, *, create: bool = True) -> VapidKeys | None:
    """The keys kept in `path`, made there first when there are none (`create`)."""
    path = path.expanduser().absolute()
    keys = _read(path)
    if keys is None and create:
        keys = _create(path)
    return keys


def _read(path: Path) -> VapidKeys | None:
    try:
        info = path.stat()
        pem = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise VapidKeyError(f"cannot read the VAPID key file {path}: {exc.strerror or exc}") from exc
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        with contextlib.suppress(OSError):
            path.chmod(0o600)
        log.warning("vapid_file.mode_fixed", path=str(path), was=oct(stat.S_IMODE(info.st_mode)))
    if not pem.strip():
        return None
    keys = VapidKeys(pem, path)
    try:
        keys._private()
    except ValueError as exc:
        raise VapidKeyError(f"the VAPID key file {path} holds no readable private key") from exc
    return keys


def _create(path: Path) -> VapidKeys:
    keys = VapidKeys.generate()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read(path) or keys
    except OSError as exc:
        raise VapidKeyError(f"cannot create the VAPID key file {path}: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "wb") as out:
        out.write(keys.private_pem)
    log.info("vapid_file.created", path=str(path))
    return VapidKeys(keys.private_pem, path)
