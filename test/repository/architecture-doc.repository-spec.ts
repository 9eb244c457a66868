import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const architecture = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

const WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
];

describe('docs/architecture.md, the request path', () => {
  const hopList = architecture.slice(
    architecture.indexOf('## POST /plants, hop by hop'),
    architecture.indexOf('## The insert batcher'),
  );
  const hops = [...hopList.matchAll(/^(\d+)\. \*\*/gm)].map(([, n]) =>
    Number(n),
  );

  it('numbers its hops 0, 1, 2... with none missing', () => {
    expect(hops.length).toBeGreaterThan(10);
    expect(hops).toEqual(hops.map((_, index) => index));
  });

  it('gives the count its list has, and names every hop it says is outside where a Nest developer looks', () => {
    const [, total] = /all (\d+) hops of a create/.exec(architecture) ?? [];
    expect(Number(total)).toBe(hops.length);
    const [, word, list] =
      /(\w+) of the hops are where a Nest developer does not usually look: ([^.]*)\./s.exec(
        architecture.replace(/\s+/g, ' '),
      ) ?? [];
    // "(0 to 5)", "(10)", "(17 to 19)": the hops named, each once.
    const named = [...list.matchAll(/\((\d+)(?: to (\d+))?/g)].flatMap(
      ([, from, to]) => {
        const last = Number(to ?? from);
        return Array.from(
          { length: last - Number(from) + 1 },
          (_, i) => Number(from) + i,
        );
      },
    );
    expect(new Set(named).size).toBe(named.length);
    expect(WORDS.indexOf(word.toLowerCase())).toBe(named.length);
    for (const hop of named) expect(hops).toContain(hop);
  });
});

describe('the paths the documentation names', () => {
  const pages = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => join('docs', name)),
  ];

  it.each(pages)(
    '%s names only files and folders of src that exist',
    (page) => {
      const text = readFileSync(join(ROOT, page), 'utf8');
      const named = [...text.matchAll(/`(src\/[\w./-]+)`/g)].map(
        ([, path]) => path,
      );
      expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
    },
  );
});
