// A schedule's timing in words, in the schedule's own time zone (the zone its cron and times are
// read in, which may differ from the browser's): "Every day at 07:00", "Every 2 hours",
// "Once, Thu 26 Nov 2026, 09:00". Cron expressions outside the common shapes are shown as they are.

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

// An instant (ISO, UTC) as the date and time on the schedule zone's clock.
export function inZone(iso, timeZone) {
  if (!iso) return "";
  const date = new Date(iso);
  if (!Number.isFinite(date.getTime())) return "";
  const options = { weekday: "short", day: "numeric", month: "short", year: "numeric",
    hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
  try {
    return new Intl.DateTimeFormat(undefined, { ...options, timeZone }).format(date);
  } catch { // a zone this browser does not know: its own clock, said so by the caller's zone label
    return new Intl.DateTimeFormat(undefined, options).format(date);
  }
}

function plural(count, unit) {
  return count === 1 ? `every ${unit}` : `every ${count} ${unit}s`;
}

export function intervalWords(seconds) {
  if (seconds % 86400 === 0) return plural(seconds / 86400, "day");
  if (seconds % 3600 === 0) return plural(seconds / 3600, "hour");
  if (seconds % 60 === 0) return plural(seconds / 60, "minute");
  return plural(seconds, "second");
}

const pad = (n) => String(n).padStart(2, "0");
const number = (text) => (/^\d+$/.test(text) ? Number(text) : null);

function weekdays(field) {
  if (field === "*") return "";
  if (field === "1-5") return " on weekdays";
  if (field === "0,6" || field === "6,0") return " at weekends";
  const parts = field.split(",").map((part) => {
    const range = part.match(/^(\d)-(\d)$/);
    if (range) return `${DAYS[range[1]]}–${DAYS[range[2]]}`;
    return /^[0-7]$/.test(part) ? DAYS[part] : null;
  });
  return parts.includes(null) ? null : ` on ${parts.join(", ")}`;
}

// "0 7 * * 1-5" → "Every weekday at 07:00"; null when the expression is not a shape we say in words.
export function cronWords(expression) {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) return null;
  const [minute, hour, day, month, weekday] = fields;
  const m = number(minute);
  if (m === null) return null;
  if (hour === "*" && day === "*" && month === "*" && weekday === "*") return `every hour at :${pad(m)}`;
  const h = number(hour);
  if (h === null || month !== "*") return null;
  const time = `${pad(h)}:${pad(m)}`;
  if (day !== "*") {
    const d = number(day);
    return d !== null && weekday === "*" ? `monthly on day ${d} at ${time}` : null;
  }
  const days = weekdays(weekday);
  if (days === null) return null;
  return days ? `at ${time}${days}` : `every day at ${time}`;
}

const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

export function timingWords(schedule) {
  if (schedule.kind === "interval") return capital(intervalWords(schedule.every_seconds));
  if (schedule.kind === "cron") {
    const words = cronWords(schedule.cron);
    return words ? capital(words) : `Cron ${schedule.cron}`;
  }
  return `Once, ${inZone(schedule.at, schedule.timezone)}`;
}
