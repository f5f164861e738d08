import { classifyAddress, isPublicAddress } from '../../../lib/webhooks/address-class.js';
import { checkEndpointUrl, endpointUrlProblems, MAX_ENDPOINT_URL_LENGTH, refusedResolution } from '../../../lib/webhooks/endpoint-url.js';
import { InvalidRequestError } from '../../../lib/errors.js';
import { PUBLIC_ADDRESSES, REFUSED_ADDRESSES } from './refused-addresses.js';

const literal = (address: string) => (address.includes(':') ? `[${address}]` : address);

describe('the address classifier', () => {
  it.each(REFUSED_ADDRESSES)('refuses %s as %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(PUBLIC_ADDRESSES)('lets %s through as public', (address) => {
    expect(classifyAddress(address)).toBe('public');
  });

  it('does not mistake a host name for an address', () => {
    expect(classifyAddress('hooks.example.com')).toBe('not-an-ip-address');
    expect(classifyAddress('127.0.0.1.example.com')).toBe('not-an-ip-address');
  });
});

describe('a webhook endpoint URL', () => {
  it('is accepted when it is https:// to a public host name or address', () => {
    expect(endpointUrlProblems('https://hooks.partner.example/webhooks/cases?x=1')).toEqual([]);
    expect(endpointUrlProblems('https://hooks.partner.example:8443/in')).toEqual([]);
    expect(endpointUrlProblems('https://8.8.8.8/in')).toEqual([]);
    expect(endpointUrlProblems('https://[2606:4700:4700::1111]/in')).toEqual([]);
    expect(checkEndpointUrl('https://Hooks.Partner.Example/in').href).toBe('https://hooks.partner.example/in');
  });

  it.each(REFUSED_ADDRESSES.filter(([a]) => !a.includes('%')))('is refused as an IP literal of %s (%s)', (address) => {
    const problems = endpointUrlProblems(`https://${literal(address)}/hook`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ field: 'url', message: expect.stringContaining('public address') });
  });

  it.each([
    ['decimal', 'https://2130706433/'],
    ['octal', 'https://0177.0.0.1/'],
    ['hexadecimal', 'https://0x7f.0x0.0x0.0x1/'],
    ['short', 'https://127.1/'],
    ['mixed hex', 'https://0x7f.1/'],
    ['trailing dot', 'https://127.0.0.1./'],
    ['percent-encoded', 'https://%31%32%37.0.0.1/'],
    ['zero', 'https://0/'],
    ['metadata in decimal', 'https://2852039166/latest/meta-data/'],
    ['metadata in hex', 'https://0xa9fea9fe/'],
    ['mapped IPv6 with a dotted tail', 'https://[::ffff:169.254.169.254]/'],
    ['mapped IPv6 in hex', 'https://[::ffff:a9fe:a9fe]/'],
    ['upper-case IPv6', 'https://[FE80::1]/'],
  ])('is refused for an IPv4 written in another spelling (%s)', (_spelling, url) => {
    expect(endpointUrlProblems(url)).toEqual([{ field: 'url', message: expect.stringContaining('public address') }]);
  });

  it.each([
    ['http://', 'http://hooks.partner.example/in', 'https://'],
    ['another scheme', 'ftp://hooks.partner.example/in', 'https://'],
    ['user info', 'https://user:pass@hooks.partner.example/in', 'user info'],
    ['a user name alone', 'https://user@hooks.partner.example/in', 'user info'],
    ['an empty user info', 'https://@hooks.partner.example/in', 'user info'],
    ['a fragment', 'https://hooks.partner.example/in#part', 'fragment'],
    ['an empty fragment', 'https://hooks.partner.example/in#', 'fragment'],
    ['localhost', 'https://localhost/in', 'localhost'],
    ['localhost with a trailing dot', 'https://localhost./in', 'localhost'],
    ['a name under localhost', 'https://api.localhost/in', 'localhost'],
    ['a single-label name', 'https://intranet/in', 'single-label'],
    ['a relative URL', '/webhooks', 'absolute'],
    ['not a URL', 'not a url', 'absolute'],
  ])('is refused with %s', (_what, url, words) => {
    const problems = endpointUrlProblems(url);
    expect(problems).toEqual([{ field: 'url', message: expect.stringContaining(words) }]);
  });

  it(`is refused above ${MAX_ENDPOINT_URL_LENGTH} characters and accepted at exactly that`, () => {
    const base = 'https://hooks.partner.example/';
    const exact = base + 'a'.repeat(MAX_ENDPOINT_URL_LENGTH - base.length);
    expect(endpointUrlProblems(exact)).toEqual([]);
    expect(endpointUrlProblems(exact + 'a')).toEqual([{ field: 'url', message: expect.stringContaining('2048 characters') }]);
  });

  it('is refused when normalising it makes it longer than the limit', () => {
    const base = 'https://hooks.partner.example/';
    const spaced = base + ' x'.repeat(900); // 1,830 characters; each space becomes %20
    expect(spaced.length).toBeLessThanOrEqual(MAX_ENDPOINT_URL_LENGTH);
    expect(endpointUrlProblems(spaced)).toEqual([{ field: 'url', message: expect.stringContaining('once normalised') }]);
  });

  it('is refused as InvalidRequestError naming the field url', () => {
    expect(() => checkEndpointUrl('https://10.0.0.1/')).toThrow(InvalidRequestError);
    try {
      checkEndpointUrl('https://10.0.0.1/');
    } catch (error) {
      expect((error as InvalidRequestError).code).toBe('INVALID_REQUEST');
      expect((error as InvalidRequestError).extensions).toEqual({
        errors: [
          { field: 'url', message: 'url must reach a public address: 10.0.0.1 is a private address, which cannot receive webhooks' },
        ],
      });
    }
  });

  describe('under the local-development option (npm start only)', () => {
    const local = { allowLocalDevelopment: true };

    it('accepts http://localhost:<port> and http://127.0.0.1:<port>', () => {
      expect(endpointUrlProblems('http://localhost:4000/hooks', local)).toEqual([]);
      expect(endpointUrlProblems('http://127.0.0.1:4000/hooks', local)).toEqual([]);
    });

    it('refuses them without the option', () => {
      expect(endpointUrlProblems('http://localhost:4000/hooks')).not.toEqual([]);
      expect(endpointUrlProblems('http://127.0.0.1:4000/hooks')).not.toEqual([]);
    });

    it('still refuses every other internal address and http:// to a public host', () => {
      expect(endpointUrlProblems('http://10.0.0.1:4000/', local)).not.toEqual([]);
      expect(endpointUrlProblems('https://169.254.169.254/', local)).not.toEqual([]);
      expect(endpointUrlProblems('http://127.0.0.2:4000/', local)).not.toEqual([]);
      expect(endpointUrlProblems('http://[::1]:4000/', local)).not.toEqual([]);
      expect(endpointUrlProblems('http://hooks.partner.example/', local)).not.toEqual([]);
      expect(endpointUrlProblems('http://user@localhost:4000/', local)).not.toEqual([]);
    });
  });
});

describe('the addresses a host name resolves to', () => {
  it('are accepted when every one is public', () => {
    expect(refusedResolution('hooks.partner.example', ['8.8.8.8', '2606:4700:4700::1111'])).toBeUndefined();
  });

  it.each(REFUSED_ADDRESSES)('are refused when one is %s (%s)', (address) => {
    expect(refusedResolution('hooks.partner.example', [address])).toContain(`hooks.partner.example resolves to ${address}`);
    expect(refusedResolution('hooks.partner.example', ['8.8.8.8', address, '1.1.1.1'])).toContain(address);
  });

  it('are refused when there are none', () => {
    expect(refusedResolution('hooks.partner.example', [])).toBe('hooks.partner.example resolves to no address');
  });

  it('may be loopback under the local-development option, and nothing else internal', () => {
    const local = { allowLocalDevelopment: true };
    expect(refusedResolution('localhost', ['127.0.0.1', '::1'], local)).toBeUndefined();
    expect(refusedResolution('localhost', ['127.0.0.1', '10.0.0.1'], local)).toContain('10.0.0.1');
  });
});
