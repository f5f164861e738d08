import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from './synth.js';

/** Every `npx cdk ...` command line in README.md and docs/, with where it is. */
function documentedCdkCommands(): { where: string; command: string }[] {
  const files = [
    'README.md',
    ...readdirSync(path.join(PROJECT_ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  return files.flatMap((file) =>
    readFileSync(path.join(PROJECT_ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, i) =>
        [...line.matchAll(/npx cdk (?:bootstrap|synth|diff|deploy|destroy)\b[^`#\n]*/g)].map((m) => ({
          where: `${file}:${i + 1}`,
          command: m[0].trim(),
        })),
      ),
  );
}

describe('the documented cdk commands', () => {
  // The app refuses to run without a stage, and every one of these commands runs it (bootstrap too).
  it('each names its stage, so it runs as written', () => {
    const commands = documentedCdkCommands();
    expect(commands.map((c) => c.command)).toContainEqual(expect.stringMatching(/^npx cdk bootstrap/));
    for (const { where, command } of commands)
      expect({ where, command, stage: /-c stage=\S+/.test(command) }).toEqual({ where, command, stage: true });
  });

  it('show how to deploy without a terminal', () => {
    expect(documentedCdkCommands().some((c) => /^npx cdk deploy .*--require-approval never/.test(c.command))).toBe(true);
  });
});
