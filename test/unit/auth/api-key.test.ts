import { API_KEY_LENGTH, formatApiKey, generateApiKey, hashSecret, parseApiKey, secretMatches } from '../../../lib/auth/api-key.js';
import { hasScope, parseScopeList } from '../../../lib/auth/scopes.js';

describe('API keys', () => {
  it('are self-identifying, selectable with one double-click and carry a 256-bit secret', () => {
    const { apiKey, keyId, secret } = generateApiKey();
    expect(apiKey).toMatch(/^pca_[A-Za-z0-9]{16}_[A-Za-z0-9]{49}$/);
    expect(apiKey).toHaveLength(API_KEY_LENGTH);
    expect(secret.length * Math.log2(62)).toBeGreaterThanOrEqual(256);
    expect(parseApiKey(apiKey)).toEqual({ keyId, secret, mode: 'live' });
  });

  it('of test mode are recognisable offline by their prefix, with the same entropy and checksum', () => {
    const { apiKey, keyId, secret, mode } = generateApiKey('test');
    expect(mode).toBe('test');
    expect(apiKey).toMatch(/^pca_test_[A-Za-z0-9]{16}_[A-Za-z0-9]{49}$/);
    expect(parseApiKey(apiKey)).toEqual({ keyId, secret, mode: 'test' });
    for (const position of [9, 20, 40, apiKey.length - 1]) {
      const original = apiKey[position]!;
      expect(parseApiKey(apiKey.slice(0, position) + (original === 'a' ? 'b' : 'a') + apiKey.slice(position + 1))).toBeUndefined();
    }
  });

  it('cannot change mode by editing the prefix: the checksum covers it', () => {
    const live = generateApiKey('live').apiKey;
    const test = generateApiKey('test').apiKey;
    expect(parseApiKey(live.replace('pca_', 'pca_test_'))).toBeUndefined();
    expect(parseApiKey(test.replace('pca_test_', 'pca_'))).toBeUndefined();
  });

  it('are never generated twice', () => {
    const seen = new Set(Array.from({ length: 500 }, () => generateApiKey().apiKey));
    expect(seen.size).toBe(500);
  });

  it('are refused offline when a character is mistyped (checksum)', () => {
    const { apiKey } = generateApiKey();
    for (const position of [4, 10, 25, 50, apiKey.length - 1]) {
      const original = apiKey[position]!;
      const typo = apiKey.slice(0, position) + (original === 'a' ? 'b' : 'a') + apiKey.slice(position + 1);
      expect(parseApiKey(typo)).toBeUndefined();
    }
  });

  it('are refused when truncated, padded or of another format', () => {
    const { apiKey } = generateApiKey();
    for (const bad of [
      '',
      apiKey.slice(0, -1),
      `${apiKey}x`,
      ` ${apiKey}`,
      apiKey.replace('pca_', 'pcx_'),
      apiKey.toUpperCase(),
      'Bearer',
      'pca_',
    ]) {
      expect(parseApiKey(bad)).toBeUndefined();
    }
  });

  it('are stored only as a SHA-256 hash and compared in constant time', () => {
    const { secret, secretHash } = generateApiKey();
    expect(secretHash).toBe(hashSecret(secret));
    expect(secretHash).not.toContain(secret);
    expect(secretMatches(secret, secretHash)).toBe(true);
    expect(secretMatches(`${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`, secretHash)).toBe(false);
    expect(secretMatches(secret, 'abc')).toBe(false);
  });

  it('format deterministically from id and secret', () => {
    expect(formatApiKey('A'.repeat(16), 'b'.repeat(43))).toBe(formatApiKey('A'.repeat(16), 'b'.repeat(43)));
  });
});

describe('scopes', () => {
  it('grant exactly what was given', () => {
    expect(hasScope(['cases:read'], 'cases:read')).toBe(true);
    expect(hasScope(['cases:read'], 'cases:write')).toBe(false);
    expect(hasScope(['webhooks:manage'], 'cases:read')).toBe(false);
  });

  it('are parsed from an operator list, refusing unknown ones', () => {
    expect(parseScopeList('cases:read, cases:write,cases:read')).toEqual(['cases:read', 'cases:write']);
    expect(() => parseScopeList('cases:delete')).toThrow(/Unknown scope "cases:delete"/);
    expect(() => parseScopeList(' , ')).toThrow(/No scopes/);
  });
});
