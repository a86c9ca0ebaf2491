import { parseSandboxCli, SANDBOX_CLI_USAGE } from '../../lib/testing/sandbox.cli-options.js';

describe('email-sandbox command line', () => {
  it('has defaults for everything', () => {
    expect(parseSandboxCli([])).toEqual({ options: {}, chaos: null, help: false });
  });

  it('reads port, keys, domains, plan, base path and chaos', () => {
    const parsed = parseSandboxCli([
      '--port',
      '4010',
      '--key',
      'sk_test_a',
      '--key',
      'sk_test_b',
      '--domain',
      'shop.test',
      '--plan',
      'free',
      '--base-path',
      '/api',
      '--chaos',
      '0.25',
      '--seed',
      '7',
    ]);
    expect(parsed.options).toEqual({
      port: 4010,
      keys: ['sk_test_a', 'sk_test_b'],
      domains: ['shop.test'],
      plan: 'free',
      basePath: '/api',
    });
    expect(parsed.chaos).toEqual({ probability: 0.25, seed: 7 });
  });

  it.each([
    [['--port']],
    [['--port', 'x']],
    [['--port', '70000']],
    [['--plan', 'pro']],
    [['--chaos', '2']],
    [['--bogus']],
  ])('rejects %j', (argv) => {
    expect(() => parseSandboxCli(argv)).toThrow();
  });

  it('offers help', () => {
    expect(parseSandboxCli(['--help']).help).toBe(true);
    expect(SANDBOX_CLI_USAGE).toContain('--port');
  });
});
