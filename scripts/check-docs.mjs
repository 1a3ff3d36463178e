#!/usr/bin/env node
// The repository stands alone (docs/decisions/0048-repository-stands-alone.md), checked by
// `npm run lint`:
// - no file cites a document that is not in the repository: the words of the outside contract and
//   decisions files, in capitals, appear nowhere in src/, test/, bench/, scripts/, sdk/, ops/, docs/
//   or the README;
// - no link in the README or docs/ leaves the repository, and every link inside it reaches a file
//   (and, for a Markdown file, a heading) that exists;
// - every path of a docs/ Markdown file (with its #heading) or of the README a code comment cites
//   exists, so a renamed heading is caught where it is cited;
// - docs/performance.md stays a reference of at most 400 lines; every decision has a row in the index;
//   every folder is named in the README's Layout and in docs/architecture.md;
// - no code comment points at documentation on another host.
// Prints each finding as file:line and exits 1 when there is any.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = process.cwd();
const findings = [];
const report = (file, line, message) => findings.push(`${file}:${line}: ${message}`);

const tracked = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
  encoding: 'utf8',
})
  .split('\0')
  .filter(Boolean)
  .filter((file) => existsSync(file));
const inScope = (file) =>
  (/^(src|test|bench|scripts|sdk|ops|docs)\//.test(file) || file === 'README.md') &&
  !/^sdk\/(dist|src\/generated)\/|^test\/fixtures\/|\.(png|jpe?g|gif|ico|wasm|tar|gz)$/.test(file);
const files = tracked.filter(inScope);

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchorsOf(markdown) {
  const anchors = new Set();
  const seen = new Map();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const headingCache = new Map();
/** The text of every heading of a Markdown file, code spans unwrapped. */
function headingsOf(file) {
  if (!headingCache.has(file)) {
    const text = readFileSync(file, 'utf8');
    headingCache.set(
      file,
      text
        .split('\n')
        .filter((line) => /^#{1,6}\s/.test(line))
        .map((line) => line.replace(/^#+\s+/, '').replace(/`/g, '')),
    );
  }
  return headingCache.get(file);
}

const anchorCache = new Map();
function hasAnchor(file, anchor) {
  if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8')));
  return anchorCache.get(file).has(anchor);
}

/** Whether `target` (a path from the root, with an optional #anchor) exists; why not, otherwise. */
function missing(target) {
  const [file, anchor] = target.split('#');
  const resolved = file === '' ? undefined : path.normalize(file);
  if (resolved !== undefined && (resolved.startsWith('..') || !existsSync(path.join(root, resolved)))) {
    return `${file} is not in the repository`;
  }
  if (anchor && resolved?.endsWith('.md') && statSync(resolved).isFile() && !hasAnchor(resolved, anchor)) {
    return `${resolved} has no heading #${anchor}`;
  }
  return undefined;
}

// Built from parts so that this file does not find itself.
const outsideCitation = new RegExp(
  `\\b(${['SP', 'EC'].join('')}|${['DES', 'IGN'].join('')}|${['STY', 'LE'].join('')})\\b`,
);

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const markdown = file.endsWith('.md');
  let fenced = false;
  lines.forEach((line, index) => {
    const at = index + 1;
    if (outsideCitation.test(line)) {
      report(file, at, 'cites a document outside the repository: cite the docs/ section or decision that states it');
    }
    if (markdown) {
      if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
      if (fenced) return;
      const prose = line.replace(/`[^`]*`/g, '');
      const links = [
        ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
        ...[...prose.matchAll(/<(https?:\/\/[^>\s]+)>/g)].map((m) => m[1]),
        ...[...prose.matchAll(/\b(?:href|src)="([^"]+)"/g)].map((m) => m[1]),
      ];
      for (const link of links) {
        if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(link)) {
          report(file, at, `links outside the repository: ${link}`);
          continue;
        }
        const target = link.startsWith('#')
          ? `${file}${link}`
          : path.join(path.dirname(file), decodeURI(link.split('#')[0])) +
            (link.includes('#') ? `#${link.split('#')[1]}` : '');
        const why = missing(target);
        if (why) report(file, at, `broken link ${link}: ${why}`);
      }
      return;
    }
    // Code: the documents its comments cite must exist, and no comment sends the reader elsewhere.
    for (const match of line.matchAll(/\b((?:docs\/[\w./-]+\.md|README\.md)(?:#[\w-]+)?)/g)) {
      const why = missing(match[1]);
      if (why) report(file, at, `cites ${match[1]}: ${why}`);
    }
    // The older form, a Markdown path, a comma and a heading in quotes: the heading must still exist
    // (its text may be cut short).
    for (const match of line.matchAll(/\b(docs\/[\w./-]+\.md|README\.md),? "([^"]+)"/g)) {
      if (!existsSync(match[1])) continue;
      const wanted = match[2].replace(/`/g, '');
      if (!headingsOf(match[1]).some((heading) => heading.startsWith(wanted))) {
        report(file, at, `cites ${match[1]}, "${match[2]}": no heading starts so`);
      }
    }
    const comment = /^\s*(\/\/|\/?\*|--|#)|\s\/\/\s/.test(line);
    if (comment) {
      for (const match of line.replace(/`[^`]*`/g, '').matchAll(/https?:\/\/([a-z0-9.-]+)/gi)) {
        const host = match[1].toLowerCase();
        const ours =
          /^(localhost|127\.0\.0\.1|0\.0\.0\.0)$|^[\d.]+$|^0x[\da-f.x]+$/.test(host) ||
          /(^|\.)(example|invalid|test|internal|local|localhost)$/.test(host) ||
          /^example\.(com|org|net)$/.test(host) ||
          /(^|\.)(stripe\.com|adyen\.com|adyenpayments\.com)$/.test(host);
        if (!ours) report(file, at, `a comment links outside the repository: ${match[0]}`);
      }
    }
  });
}

// Every decision has its row in the index, with its status.
const index = readFileSync('docs/decisions/README.md', 'utf8');
for (const file of files.filter((name) => /^docs\/decisions\/\d{4}-.*\.md$/.test(name))) {
  if (!index.includes(`](${path.basename(file)})`)) report(file, 1, 'has no row in docs/decisions/README.md');
}

// Every folder is named in the README's Layout and in docs/architecture.md's "The folders".
const sectionOf = (file, heading) => {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  const end = text.indexOf('\n## ', start + 1);
  return start < 0 ? '' : text.slice(start, end < 0 ? undefined : end);
};
const layouts = [
  ['README.md', sectionOf('README.md', 'Layout')],
  ['docs/architecture.md', sectionOf('docs/architecture.md', 'The folders')],
];
const folders = new Set(
  tracked
    .filter((file) => !file.startsWith('node_modules/'))
    .flatMap((file) => {
      const parts = file.split('/');
      if (parts.length < 2) return [];
      if (parts[0] !== 'src') return [parts[0]];
      // src/'s folders, and the webhook engine's parts (src/webhooks/engine/…).
      return parts.length < 3 ? [] : parts[1] === 'webhooks' && parts.length >= 4 ? [parts[1], parts[2]] : [parts[1]];
    }),
);
for (const [file, section] of layouts) {
  for (const folder of folders) {
    if (!new RegExp(`(^|[\\s(])${folder.replace('.', '\\.')}/`, 'm').test(section)) {
      report(file, 1, `its layout does not name the folder ${folder}/`);
    }
  }
}

// docs/performance.md is a reference, not a log: the latest figure of each goal, history in git.
const performanceLines = readFileSync('docs/performance.md', 'utf8').split('\n').length;
if (performanceLines > 400) {
  report(
    'docs/performance.md',
    401,
    `${performanceLines} lines: replace figures rather than add dated sections (at most 400)`,
  );
}

if (findings.length > 0) {
  console.error(findings.join('\n'));
  console.error(`\n${findings.length} finding(s): see docs/decisions/0048-repository-stands-alone.md.`);
  process.exitCode = 1;
} else {
  console.log(`docs check: ${files.length} files, every citation and link stays in the repository`);
}
