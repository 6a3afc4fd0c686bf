#!/usr/bin/env node
'use strict';
// Rewraps comments with a line over the limit (default 120), because Prettier wraps code but never comments.
//   node scripts/reflow-comments.js [--check] [--width N] <file or folder>...
// Only a paragraph that holds a long line is refilled, greedily, with the same words in the same order: blank
// comment lines, list items (`-`, `*`, `1.`), JSDoc tags, fenced code and a line that ended with room to spare
// stay where they are, and a `code span` is never split. A long comment after code on the same line is only reported.
// With --check nothing is written and the exit code is 1 when something would change. Run it after Prettier, which sets
// the indentation.

const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.tools', '.cambio', 'migrations', 'fixtures']);
const EXTENSIONS = /\.(ts|js|mjs|cjs)$/;
const LIST_ITEM = /^([-*+]|\d+[.)])\s+/;

function filesUnder(target) {
  const stat = fs.statSync(target);
  if (stat.isFile()) return [target];
  return fs
    .readdirSync(target, { withFileTypes: true })
    .flatMap((e) => {
      const full = path.join(target, e.name);
      if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : filesUnder(full);
      return EXTENSIONS.test(e.name) && !e.name.endsWith('.d.ts') ? [full] : [];
    })
    .sort();
}

/** Every comment of the file, once, in order, as [pos, end] (the parser knows what is a string and what is not). */
function commentRanges(file, text) {
  const kind = /\.(js|cjs|mjs)$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const seen = new Map();
  const add = (ranges) => ranges?.forEach((r) => seen.set(r.pos, r));
  const visit = (node) => {
    add(ts.getLeadingCommentRanges(text, node.pos));
    add(ts.getTrailingCommentRanges(text, node.end));
    node.forEachChild(visit);
  };
  add(ts.getLeadingCommentRanges(text, 0));
  visit(source);
  add(ts.getLeadingCommentRanges(text, source.endOfFileToken.pos));
  return [...seen.values()].sort((a, b) => a.pos - b.pos);
}

/** Words of a paragraph; a `code span` with spaces inside stays one word. */
function words(textValue) {
  const out = [];
  let current = '';
  let inCode = false;
  for (const ch of textValue) {
    if (ch === '`') inCode = !inCode;
    if (/\s/.test(ch) && !inCode) {
      if (current) out.push(current);
      current = '';
    } else current += ch;
  }
  if (current) out.push(current);
  // An unbalanced backtick would glue the rest of the paragraph into one word: split on spaces instead.
  return inCode ? textValue.split(/\s+/).filter(Boolean) : out;
}

/** Greedy fill: `first` opens the paragraph, `rest` opens each following line. */
function fill(items, first, rest, width) {
  const lines = [];
  let line = first;
  let empty = true;
  for (const w of items) {
    if (!empty && line.length + 1 + w.length > width) {
      lines.push(line);
      line = rest + w;
    } else line += (empty ? '' : ' ') + w;
    empty = false;
  }
  lines.push(line);
  return lines;
}

/** A sentence that ended with room for the next line's first word ended there on purpose (e.g. "Targets: ..."). */
function deliberateBreak(line, next, width) {
  const trimmed = line.trimEnd();
  const room = trimmed.length + 1 + next.trim().split(/\s+/)[0].length <= width;
  return room && /[.:;!?]$/.test(trimmed);
}

/**
 * Refills the paragraphs with a long line. `bodies` are the comment's lines without their prefix; `prefix` is what
 * each output line starts with (indentation and `// ` or ` * `). Returns the new bodies or null when nothing changed.
 */
function reflowBodies(bodies, prefix, width) {
  const out = [];
  let changed = false;
  let fenced = false;
  for (let i = 0; i < bodies.length;) {
    const body = bodies[i];
    if (/^\s*```/.test(body)) fenced = !fenced;
    if (fenced || /^\s*```/.test(body) || body.trim() === '' || /^\s*eslint|^\s*@ts-|^\s*prettier-ignore/.test(body)) {
      out.push(body);
      i++;
      continue;
    }
    // A paragraph: this line and the following ones indented as its continuation, up to a blank line, a list item,
    // a JSDoc tag or a fence.
    const indent = body.match(/^\s*/)[0];
    const marker = body.slice(indent.length).match(LIST_ITEM);
    const hang = indent + (marker ? ' '.repeat(marker[0].length) : '');
    let j = i + 1;
    while (
      j < bodies.length &&
      bodies[j].trim() !== '' &&
      bodies[j].match(/^\s*/)[0] === hang &&
      !LIST_ITEM.test(bodies[j].trim()) &&
      !/^\s*(@|```)/.test(bodies[j]) &&
      !deliberateBreak(prefix + bodies[j - 1], bodies[j], width)
    ) {
      j++;
    }
    const paragraph = bodies.slice(i, j);
    // The lines before the first long one stay as they are; the refill starts there.
    const first = paragraph.findIndex((b) => (prefix + b).trimEnd().length > width);
    if (first >= 0) {
      const lead = first === 0 ? indent + (marker ? marker[0] : '') : hang;
      const items = words(
        paragraph
          .slice(first)
          .map((b, k) => (k === 0 ? b.slice(lead.length) : b))
          .join(' '),
      );
      const filled = fill(items, prefix + lead, prefix + hang, width).map((l) => l.slice(prefix.length));
      if (filled.join('\n') !== paragraph.slice(first).join('\n')) changed = true;
      out.push(...paragraph.slice(0, first), ...filled);
    } else out.push(...paragraph);
    i = j;
  }
  return changed ? out : null;
}

function reflowFile(file, width) {
  const text = fs.readFileSync(file, 'utf8');
  const lineStart = (pos) => text.lastIndexOf('\n', pos - 1) + 1;
  const lineEnd = (pos) => {
    const e = text.indexOf('\n', pos);
    return e === -1 ? text.length : e;
  };
  const edits = []; // [from, to, replacement]
  const reported = [];
  const lineOf = (pos) => text.slice(0, pos).split('\n').length;
  const ranges = commentRanges(file, text);

  for (let r = 0; r < ranges.length; r++) {
    const range = ranges[r];
    const start = lineStart(range.pos);
    const lead = text.slice(start, range.pos);
    const standalone = /^\s*$/.test(lead);
    if (range.kind === ts.SyntaxKind.SingleLineCommentTrivia) {
      if (!standalone) {
        if (lineEnd(range.pos) - start > width) reported.push(`${file}:${lineOf(range.pos)}: comment after code`);
        continue;
      }
      // A run: standalone `//` lines with the same indentation on consecutive lines.
      const run = [range];
      while (r + 1 < ranges.length) {
        const next = ranges[r + 1];
        const nextStart = lineStart(next.pos);
        const prevEnd = run[run.length - 1].end;
        if (
          next.kind !== ts.SyntaxKind.SingleLineCommentTrivia ||
          text.slice(nextStart, next.pos) !== lead ||
          text.slice(prevEnd, nextStart) !== '\n'
        ) {
          break;
        }
        run.push(next);
        r++;
      }
      const raw = run.map((c) => text.slice(c.pos, c.end));
      if (!raw.some((l) => lead.length + l.trimEnd().length > width)) continue;
      if (raw.some((l) => l.startsWith('///') || l.startsWith('//#'))) continue;
      // `//text` without the space keeps its body as it is; a run mixes them rarely enough to just skip it.
      if (raw.some((l) => l.length > 2 && l[2] !== ' ')) {
        reported.push(`${file}:${lineOf(range.pos)}: comment without a space after //`);
        continue;
      }
      const bodies = raw.map((l) => l.slice(3).trimEnd());
      const next = reflowBodies(bodies, `${lead}// `, width);
      if (next) {
        edits.push([start, run[run.length - 1].end, next.map((b) => `${lead}//${b ? ` ${b}` : ''}`).join('\n')]);
      }
      continue;
    }

    // A block comment.
    const raw = text.slice(range.pos, range.end);
    const lines = raw.split('\n');
    const tooLong = lines.some((l, k) => (k === 0 ? lineEnd(range.pos) - start : l.trimEnd().length) > width);
    if (!tooLong) continue;
    if (!standalone || lineEnd(range.end) !== range.end) {
      reported.push(`${file}:${lineOf(range.pos)}: block comment shares its line with code`);
      continue;
    }
    const open = raw.startsWith('/**') ? '/**' : '/*';
    let bodies;
    if (lines.length === 1) {
      bodies = [raw.slice(open.length, -2).trim()];
    } else {
      const inner = lines.slice(1, -1);
      const firstText = lines[0].slice(open.length).trim();
      const closing = lines[lines.length - 1].trim();
      if (!inner.every((l) => /^\s*\*( |$)/.test(l)) || closing.replace(/\*\/$/, '').replace(/^\*/, '').trim()) {
        reported.push(`${file}:${lineOf(range.pos)}: block comment of an unusual shape`);
        continue;
      }
      bodies = [...(firstText ? [firstText] : []), ...inner.map((l) => l.replace(/^\s*\* ?/, '').trimEnd())];
    }
    const starPrefix = `${lead} * `;
    const next = reflowBodies(bodies, starPrefix, width) ?? (lines.length === 1 ? bodies : null);
    if (next) {
      const body = next.map((b) => (b ? `${lead} * ${b}` : `${lead} *`)).join('\n');
      edits.push([start, range.end, `${lead}${open}\n${body}\n${lead} */`]);
    }
  }

  let result = text;
  for (const [from, to, replacement] of edits.sort((a, b) => b[0] - a[0])) {
    const before = result.slice(from, to);
    const same = (s) =>
      s
        .replace(/\/\*\*?|\*\//g, ' ')
        .replace(/^\s*(\/\/|\*)/gm, ' ')
        .split(/\s+/)
        .filter(Boolean)
        .join(' ');
    if (same(before) !== same(replacement)) throw new Error(`${file}: the words changed near offset ${from}`);
    result = result.slice(0, from) + replacement + result.slice(to);
  }
  return { changed: result !== text, result, reported };
}

function main(argv) {
  let width = 120;
  let check = false;
  const targets = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--check') check = true;
    else if (argv[i] === '--width') width = Number(argv[++i]);
    else targets.push(argv[i]);
  }
  if (targets.length === 0 || !(width > 20)) {
    console.error('usage: reflow-comments.js [--check] [--width N] <file or folder>...');
    return 2;
  }
  let changedFiles = 0;
  for (const file of targets.flatMap(filesUnder)) {
    const { changed, result, reported } = reflowFile(file, width);
    for (const line of reported) console.error(`left as it is: ${line}`);
    if (!changed) continue;
    changedFiles++;
    if (check) console.log(`would reflow ${file}`);
    else fs.writeFileSync(file, result);
  }
  console.error(`${changedFiles} file(s) ${check ? 'would change' : 'reflowed'}`);
  return check && changedFiles > 0 ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
