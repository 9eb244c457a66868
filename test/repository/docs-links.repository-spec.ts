import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The documentation's relative links lead somewhere: a file or folder of this repository,
 * and for `#anchor` a heading of that file, by GitHub's rules.
 */

const ROOT = resolve(import.meta.dirname, '../..');

function documentationFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', ...docs, join('bench', 'README.md')];
}

/** The text outside fenced code blocks: headings and links there are not. */
function withoutFences(markdown: string): string {
  return markdown.replace(
    /^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm,
    '',
  );
}

/** The text outside code blocks and inline code spans, where links are links. */
function proseOf(markdown: string): string {
  return withoutFences(markdown).replace(/(`+)[^`]*?\1/g, '');
}

/** Inline links and images, `[text](target "title")`, and reference definitions. */
function linkTargets(markdown: string): string[] {
  const prose = proseOf(markdown);
  const inline = [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^\s)>]+)>?[^)]*\)/g)];
  const references = [
    ...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)/gm),
  ];
  return [...inline, ...references].map((match) => match[1]);
}

/** GitHub's heading ids: the heading's text, lower-cased, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of headingTexts(markdown)) {
    const text = line
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/[`*]/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    ids.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return ids;
}

function headingTexts(markdown: string): string[] {
  return [
    ...withoutFences(markdown).matchAll(
      /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gm,
    ),
  ].map((match) => match[1]);
}

/** What is wrong with each relative link of `file` (a path from the root), if anything. */
function brokenLinks(file: string, markdown: string): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(markdown)) {
    // Absolute URLs (https:, mailto:) are the web's business, not this repository's.
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [pathPart, anchor] = target.split('#', 2) as [string, string?];
    const path = decodeURIComponent(pathPart);
    if (path === '') {
      if (anchor !== undefined && !headingIds(markdown).has(anchor))
        problems.push(`${file}: ${target}: no such heading in this file`);
      continue;
    }
    const absolute = resolve(ROOT, dirname(file), path);
    const fromRoot = relative(ROOT, absolute);
    if (fromRoot.startsWith('..') || fromRoot.startsWith(sep)) {
      problems.push(`${file}: ${target} leads out of the repository`);
      continue;
    }
    if (!existsSync(absolute)) {
      problems.push(`${file}: ${target}: no such file (${fromRoot})`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (!absolute.endsWith('.md')) {
      problems.push(
        `${file}: ${target}: an anchor into a file that is not Markdown`,
      );
      continue;
    }
    if (!headingIds(readFileSync(absolute, 'utf8')).has(anchor)) {
      problems.push(
        `${file}: ${target}: no heading "#${anchor}" in ${fromRoot}`,
      );
    }
  }
  return problems;
}

describe('links in the documentation', () => {
  it.each(documentationFiles())('%s: every relative link resolves', (file) => {
    const markdown = readFileSync(join(ROOT, file), 'utf8');
    expect(brokenLinks(file, markdown)).toEqual([]);
  });

  it('the README links every page of docs/', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const linked = new Set(
      linkTargets(readme).map((target) => target.split('#')[0]),
    );
    const pages = documentationFiles().filter((file) =>
      file.startsWith(`docs${sep}`),
    );
    expect(pages.length).toBeGreaterThan(0);
    expect(
      pages.filter((page) => !linked.has(page.split(sep).join('/'))),
    ).toEqual([]);
  });

  it('finds a missing file, a missing heading and a link out of the repository', () => {
    const page = [
      '# A page',
      '## Second `part`: here',
      'See [ok](#second-part-here), [file](../bench/README.md#the-load), [not here](#nope),',
      '[gone](missing.md), [no heading](architecture.md#nowhere), [out](../../elsewhere.md).',
      '```',
      '[in code](not-checked.md)',
      '```',
      'and `[inline](not-checked.md)`, [web](https://example.com/x.md).',
    ].join('\n');
    expect(brokenLinks(join('docs', 'page.md'), page)).toEqual([
      'docs/page.md: #nope: no such heading in this file',
      'docs/page.md: missing.md: no such file (docs/missing.md)',
      'docs/page.md: architecture.md#nowhere: no heading "#nowhere" in docs/architecture.md',
      'docs/page.md: ../../elsewhere.md leads out of the repository',
    ]);
  });

  it('names headings as GitHub does', () => {
    const ids = headingIds(
      [
        '# Runtime: Node.js 24 LTS, brought by the project',
        '### 2026-11-22, phase 6b: `--no-allocation-site-pretenuring`, and the p99',
        '## Notes',
        '## Notes',
        '```',
        '# not a heading',
        '```',
      ].join('\n'),
    );
    expect([...ids]).toEqual([
      'runtime-nodejs-24-lts-brought-by-the-project',
      '2026-11-22-phase-6b---no-allocation-site-pretenuring-and-the-p99',
      'notes',
      'notes-1',
    ]);
  });
});
