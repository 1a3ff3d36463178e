/**
 * The dashboard's one stylesheet, served as a static file (docs/decisions/0005). It lives in a
 * module rather than a .css file so that the build copies nothing: `tsc` carries it into dist/.
 */
export const stylesheet = `
:root { --ink: #1b1f24; --muted: #555e69; --line: #d8dde3; --bg: #f6f7f9; --accent: #2450b8; --bad: #b3261e; --good: #1d7a3d; --warn: #8a5300; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--ink); background: var(--bg); overflow-wrap: anywhere; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #f0b400; outline-offset: 2px; }
.skip { position: absolute; left: -9999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px 8px; z-index: 2; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.muted { color: var(--muted); }
header.top { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: center; padding: 8px 16px; background: #fff; border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; margin-right: auto; }
.frame { display: grid; grid-template-columns: 200px minmax(0, 1fr); min-height: calc(100vh - 52px); }
body.signed-out .frame { grid-template-columns: minmax(0, 1fr); }
aside.side { background: #fff; border-right: 1px solid var(--line); padding: 12px 8px; }
aside.side ul, details.menu ul { list-style: none; margin: 0; padding: 0; }
aside.side a, details.menu a { display: block; padding: 6px 10px; border-radius: 6px; text-decoration: none; color: var(--ink); }
aside.side a:hover, details.menu a:hover { background: #eef2fb; }
aside.side a[aria-current="page"], details.menu a[aria-current="page"] { background: #e3eafb; color: var(--accent); font-weight: 700; }
details.menu { display: none; }
.mode-test { background: #fff4d6; border: 1px solid #e0b84a; border-radius: 4px; padding: 0 6px; }
.mode-live { background: #dff3e4; border: 1px solid #5aa36e; border-radius: 4px; padding: 0 6px; }
main { max-width: 1200px; width: 100%; padding: 16px 24px; min-width: 0; }
main:focus { outline: none; }
h1 { font-size: 1.5rem; margin: 8px 0 16px; }
h2 { font-size: 1.15rem; margin: 24px 0 8px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px; margin-bottom: 16px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 0.85rem; overflow-wrap: normal; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.money { white-space: nowrap; } .currency { color: var(--muted); font-size: 0.85em; }
.person .muted { display: block; font-size: 0.85em; }
form.inline { display: inline; }
.field { display: flex; flex-direction: column; gap: 2px; margin-bottom: 12px; max-width: 420px; }
.field label { font-weight: 600; }
.field .hint { color: var(--muted); font-size: 0.85rem; }
.field .error, .form-error { color: var(--bad); font-weight: 600; }
input, select, textarea { font: inherit; padding: 6px 8px; border: 1px solid #767f8a; border-radius: 4px; max-width: 100%; }
input[aria-invalid="true"], select[aria-invalid="true"] { border-color: var(--bad); }
button { font: inherit; padding: 6px 14px; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); }
.filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: flex-end; }
.filters .field { margin: 0; }
.notice { background: #e8f0fe; border: 1px solid #9bb5ec; padding: 8px 12px; border-radius: 6px; margin-bottom: 16px; }
.secret { font-family: ui-monospace, monospace; word-break: break-all; background: #fff8e1; padding: 8px; border: 1px dashed #c9a227; }
.status-succeeded, .status-enabled { color: var(--good); } .status-failed, .status-disabled { color: var(--bad); }
.badge { display: inline-block; padding: 0 8px; border-radius: 999px; font-size: 0.85rem; font-weight: 600; white-space: nowrap; border: 1px solid; }
.badge-good { background: #e3f4e8; color: #145c2d; border-color: #9fd3ae; }
.badge-bad { background: #fde8e6; color: #8c1d17; border-color: #f1a9a3; }
.badge-warn { background: #fff3dc; color: #6e4200; border-color: #e9c27a; }
.badge-info { background: #e6eefc; color: #1c3f91; border-color: #a9bff0; }
.badge-neutral { background: #eef0f3; color: #3d444d; border-color: #c6ccd3; }
nav.tabs, nav.ranges { margin: 0 0 12px; }
nav.tabs ul, nav.ranges ul { display: flex; flex-wrap: wrap; gap: 4px; list-style: none; margin: 0; padding: 0; }
nav.tabs a { display: inline-block; padding: 4px 10px; border: 1px solid var(--line); border-radius: 6px; background: #fff; text-decoration: none; color: var(--ink); }
nav.tabs a[aria-current="page"] { border-color: var(--accent); background: #e3eafb; color: var(--accent); font-weight: 700; }
nav.tabs .count { color: var(--muted); font-variant-numeric: tabular-nums; }
nav.ranges a { display: inline-block; padding: 2px 8px; border-radius: 999px; }
nav.ranges a[aria-current="true"] { background: #e3eafb; font-weight: 700; }
.empty-state { text-align: center; }
.empty-state .empty-title { font-weight: 700; font-size: 1.05rem; }
pre.command { display: inline-block; text-align: left; max-width: 100%; }
ol.timeline { list-style: none; margin: 0 0 16px; padding: 0 0 0 18px; border-left: 2px solid var(--line); }
ol.timeline li { position: relative; margin: 0 0 14px; padding-left: 8px; }
ol.timeline li::before { content: ""; position: absolute; left: -25px; top: 6px; width: 12px; height: 12px; border-radius: 50%; background: #9aa3ad; border: 2px solid #fff; }
ol.timeline li.tone-good::before { background: var(--good); } ol.timeline li.tone-bad::before { background: var(--bad); }
ol.timeline li.tone-warn::before { background: #d08a00; } ol.timeline li.tone-info::before { background: var(--accent); }
ol.timeline p { margin: 0; } ol.timeline .when { color: var(--muted); font-size: 0.85rem; }
ol.timeline .detail { font-size: 0.9rem; }
.delta { display: block; font-size: 0.85rem; } .delta.up { color: var(--good); } .delta.down { color: var(--bad); } .delta.neutral { color: var(--muted); }
/* Wrapped and shown whole, never a box of its own that scrolls: one would need keyboard access (axe-core). */
pre { white-space: pre-wrap; word-break: break-all; background: #fff; border: 1px solid var(--line); padding: 8px; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 16px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0; }
.sign-in { max-width: 420px; margin: 48px auto; }
svg.chart { width: 100%; height: auto; display: block; }
figure.chart { max-width: 960px; margin: 0 0 16px; background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; }
figure.chart figcaption { font-weight: 600; margin-bottom: 4px; }
svg.chart .bar { fill: var(--accent); } svg.chart .bar:hover { fill: #f0b400; }
svg.chart .baseline { stroke: var(--line); } svg.chart .axis { fill: var(--muted); font-size: 12px; }
.figures { display: flex; flex-wrap: wrap; gap: 12px; margin-bottom: 16px; }
.figures .card { margin: 0; min-width: 160px; } .figures .value { font-size: 1.4rem; font-weight: 700; display: block; }
@media (max-width: 900px) {
  .frame { grid-template-columns: minmax(0, 1fr); }
  aside.side { display: none; }
  details.menu { display: block; background: #fff; border-bottom: 1px solid var(--line); padding: 4px 16px; }
  details.menu summary { cursor: pointer; font-weight: 600; padding: 6px 0; }
}
@media (max-width: 600px) {
  main { padding: 8px; }
  header.top { padding: 8px; }
  header.top .who { display: none; }
  th, td { padding: 4px 6px; font-size: 0.9rem; }
  .hide-narrow { display: none; }
  svg.chart .axis { font-size: 28px; }
  table.list thead { display: none; }
  table.list, table.list tbody, table.list tr { display: block; width: 100%; }
  table.list tr { border: 1px solid var(--line); border-radius: 8px; margin-bottom: 8px; padding: 4px 0; background: #fff; }
  table.list td { display: grid; grid-template-columns: 38% minmax(0, 1fr); gap: 8px; border: 0; text-align: left; }
  table.list td::before { content: attr(data-label); color: var(--muted); font-weight: 600; font-size: 0.85rem; }
  table.list td.hide-narrow { display: none; }
  table.list td.money { white-space: normal; }
  .figures .card { min-width: 0; flex: 1 1 140px; }
}
`;

/**
 * The one static script (docs/decisions/0005 and 0022): progressive enhancement only, every page
 * works without it. After a form is refused it moves focus to the first field in error, so a
 * keyboard or screen-reader user lands on the field and hears its message; Escape closes the
 * phone menu.
 */
export const script = `
document.addEventListener('DOMContentLoaded', function () {
  var invalid = document.querySelector('[aria-invalid="true"]');
  if (invalid) invalid.focus();
  document.addEventListener('keydown', function (event) {
    var menu = document.querySelector('details.menu[open]');
    if (event.key === 'Escape' && menu) {
      menu.open = false;
      menu.querySelector('summary').focus();
    }
  });
});
`;
