import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const DOCKERFILE_PATH = resolve('docker/Dockerfile');

export interface Instruction {
  /** Upper case: FROM, RUN, COPY... */
  keyword: string;
  /** Everything after the keyword, continuation lines joined with a space. */
  args: string;
  line: number;
}

export interface Stage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

/**
 * Enough of the Dockerfile grammar for these checks: comments, `\` continuations (with
 * comment and blank lines inside them dropped, as Docker does), one instruction per
 * logical line. No `# escape=` directive, no heredocs.
 */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending: { parts: string[]; line: number } | undefined;
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line.startsWith('#') || line === '') return;
    const continued = line.endsWith('\\');
    const part = continued ? line.slice(0, -1).trim() : line;
    pending ??= { parts: [], line: index + 1 };
    pending.parts.push(part);
    if (continued) return;
    const joined = pending.parts.join(' ');
    const [keyword] = joined.split(/\s/, 1);
    instructions.push({
      keyword: keyword.toUpperCase(),
      args: joined.slice(keyword.length).trim(),
      line: pending.line,
    });
    pending = undefined;
  });
  if (pending !== undefined) {
    throw new Error(
      `Dockerfile ends inside a continuation (line ${pending.line})`,
    );
  }
  return instructions;
}

export function stagesOf(instructions: Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const words = instruction.args
        .split(/\s+/)
        .filter((word) => !word.startsWith('--'));
      const as = words.findIndex((word) => word.toUpperCase() === 'AS');
      stages.push({
        image: words[0],
        name: as >= 0 ? words[as + 1] : undefined,
        instructions: [],
      });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

export function readDockerfileStages(): Stage[] {
  return stagesOf(parseDockerfile(readFileSync(DOCKERFILE_PATH, 'utf8')));
}

/**
 * The exec (JSON array) form of CMD, ENTRYPOINT or HEALTHCHECK CMD; undefined for the shell
 * form. Docker silently treats a malformed array as a shell command, hence the strictness.
 */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return undefined;
  }
  return Array.isArray(parsed) &&
    parsed.every((item) => typeof item === 'string')
    ? parsed
    : undefined;
}

/** ENV `a=1 b="two words"` (or the legacy `ENV a 1`) as name/value pairs. */
export function envPairs(args: string): [string, string][] {
  const legacy = /^([A-Za-z_][A-Za-z0-9_]*)\s+(.*)$/.exec(args);
  if (legacy !== null) {
    return [[legacy[1], legacy[2]]];
  }
  return [
    ...args.matchAll(
      /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g,
    ),
  ].map(([, name, value]) => [name, value.replace(/^(["'])(.*)\1$/, '$2')]);
}

/** ARG `NAME` or `NAME=default`, one or more. */
export function argPairs(args: string): [string, string | undefined][] {
  return args
    .split(/\s+/)
    .filter((word) => word !== '')
    .map((word) => {
      const equals = word.indexOf('=');
      return equals < 0
        ? [word, undefined]
        : [word.slice(0, equals), word.slice(equals + 1)];
    });
}

/** The `npm ci ...` command of a RUN line, as words, if it has one. */
export function npmCiCommand(args: string): string[] | undefined {
  return args
    .split(/&&|;/)
    .map((command) => command.trim().split(/\s+/))
    .find(([program, verb]) => program === 'npm' && verb === 'ci');
}
