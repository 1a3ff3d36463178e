/**
 * The dashboard's one stylesheet, served as a static file (docs/decisions/0005). It lives in a
 * module rather than a .css file so that the build copies nothing: `tsc` carries it into dist/.
 */
export const stylesheet = `
:root { --ink: #1b1f24; --muted: #5b6470; --line: #d8dde3; --bg: #f6f7f9; --accent: #2450b8; --bad: #b3261e; --good: #1d7a3d; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #f0b400; outline-offset: 2px; }
.skip { position: absolute; left: -9999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px 8px; }
header.top { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; padding: 8px 16px; background: #fff; border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; margin-right: auto; }
nav.main ul { display: flex; flex-wrap: wrap; gap: 4px 14px; list-style: none; margin: 0; padding: 0; }
nav.main a[aria-current="page"] { font-weight: 700; text-decoration: none; color: var(--ink); }
.mode-test { background: #fff4d6; border: 1px solid #e0b84a; border-radius: 4px; padding: 0 6px; }
.mode-live { background: #dff3e4; border: 1px solid #5aa36e; border-radius: 4px; padding: 0 6px; }
main { max-width: 1200px; margin: 0 auto; padding: 16px; }
h1 { font-size: 1.5rem; margin: 8px 0 16px; }
h2 { font-size: 1.15rem; margin: 24px 0 8px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px; margin-bottom: 16px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 0.85rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
form.inline { display: inline; }
.field { display: flex; flex-direction: column; gap: 2px; margin-bottom: 12px; max-width: 420px; }
.field label { font-weight: 600; }
.field .hint { color: var(--muted); font-size: 0.85rem; }
.field .error, .form-error { color: var(--bad); font-weight: 600; }
input, select, textarea { font: inherit; padding: 6px 8px; border: 1px solid #9aa3ad; border-radius: 4px; max-width: 100%; }
input[aria-invalid="true"], select[aria-invalid="true"] { border-color: var(--bad); }
button { font: inherit; padding: 6px 14px; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); }
.filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: flex-end; }
.filters .field { margin: 0; }
.notice { background: #e8f0fe; border: 1px solid #9bb5ec; padding: 8px 12px; border-radius: 6px; margin-bottom: 16px; }
.secret { font-family: ui-monospace, monospace; word-break: break-all; background: #fff8e1; padding: 8px; border: 1px dashed #c9a227; }
.status-succeeded, .status-enabled { color: var(--good); } .status-failed, .status-disabled { color: var(--bad); }
pre { white-space: pre-wrap; word-break: break-all; background: #fff; border: 1px solid var(--line); padding: 8px; max-height: 400px; overflow: auto; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
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
@media (max-width: 600px) {
  main { padding: 8px; }
  th, td { padding: 4px 6px; font-size: 0.9rem; }
  .hide-narrow { display: none; }
  svg.chart .axis { font-size: 28px; }
}
`;
