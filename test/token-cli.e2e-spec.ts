import { resolve } from 'node:path';
import { inject } from 'vitest';
import { useApp } from './support/app.js';
import { type CommandResult, runCommand } from './support/command.js';
import { untilTokenAnswered } from './support/plants.js';

/** `npm run token -- <args>` minus the build step: the built CLI against the e2e database. */
function tokenCli(...args: string[]): Promise<CommandResult> {
  return runCommand(
    process.execPath,
    [resolve('dist/service/cli/token.js'), ...args],
    {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: inject('databaseUrl'),
        NO_COLOR: '1',
      },
    },
  );
}

describe('npm run token', () => {
  const service = useApp();
  const name = `cli-${process.pid}-${Date.now()}`;

  it('creates a token shown once, that the service accepts', async () => {
    const created = await tokenCli(
      'create',
      '--name',
      name,
      '--expires-in',
      '90d',
    );
    expect(created.code).toBe(0);
    const token = created.stdout.trim().split('\n').at(-1) ?? '';
    expect(token).toMatch(/^pst_[\w-]{43}$/);
    expect(created.stdout).toMatch(
      new RegExp(`Created token "${name}", expires \\d{4}-`),
    );

    // The running service learns of it through a notification: polled, not raced.
    await untilTokenAnswered(
      service().url,
      token,
      200,
      'the created token accepted',
    );

    const listed = await tokenCli('list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^NAME\s+CREATED\s+EXPIRES\s+STATE$/m);
    expect(listed.stdout).toMatch(
      new RegExp(`^${name}\\s+\\S+\\s+\\S+\\s+active$`, 'm'),
    );
    expect(listed.stdout).not.toContain(token.slice(4));

    const revoked = await tokenCli('revoke', name);
    expect(revoked.code).toBe(0);
    expect((await tokenCli('list')).stdout).toMatch(
      new RegExp(`^${name}\\s+.*revoked$`, 'm'),
    );
    await untilTokenAnswered(
      service().url,
      token,
      401,
      'the revoked token refused',
    );
  });

  it.each([
    [['create', '--name', 'bad name!'], /--name/],
    [['create'], /--name/],
    [['create', '--name', 'ok', '--expires-in', 'soon'], /--expires-in/],
    [['revoke', 'no-such-token'], /No active token is named "no-such-token"/],
    [
      ['rotate'],
      /^Usage:\n {2}node dist\/service\/cli\/token\.js create --name/,
    ],
  ])('refuses %j with exit code 2 and a message', async (args, message) => {
    const result = await tokenCli(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('says where it looked when there is no api_tokens table, with exit code 1', async () => {
    const result = await tokenCli('list', '--schema', 'nowhere');
    expect(result).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        'No api_tokens table in schema "nowhere"',
      ) as unknown,
    });
  });

  it('refuses a name that is taken', async () => {
    const taken = `taken-${process.pid}-${Date.now()}`;
    expect((await tokenCli('create', '--name', taken)).code).toBe(0);
    const again = await tokenCli('create', '--name', taken);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`A token named ${taken} exists already.`);
  });
});
