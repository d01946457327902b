import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { excludedProviderReason } from './excluded-providers.js';

describe('excludedProviderReason', () => {
  it('excludes Google and GitHub hosts, subdomains included', () => {
    assert.equal(excludedProviderReason({ url: 'https://drivemcp.googleapis.com/mcp/v1' }), 'points at drivemcp.googleapis.com');
    assert.equal(excludedProviderReason({ url: 'https://api.githubcopilot.com/mcp/' }), 'points at api.githubcopilot.com');
    assert.equal(excludedProviderReason({ url: 'https://github.com/mcp' }), 'points at github.com');
  });

  it('does not mistake a look-alike host for one', () => {
    assert.equal(excludedProviderReason({ url: 'https://notgoogle.com.example.org/mcp' }), undefined);
    assert.equal(excludedProviderReason({ url: 'https://mygithub.community/mcp' }), undefined);
  });

  it('excludes by id and by name, case-insensitively', () => {
    assert.equal(excludedProviderReason({ id: 'gmail', url: 'https://mail.example.com/mcp' }), 'has "gmail" in its id');
    assert.equal(excludedProviderReason({ name: 'GitHub Issues', url: 'https://issues.example.com/mcp' }), 'has "github" in its name');
    assert.equal(excludedProviderReason({ name: 'YouTube Studio', url: 'https://yt.example.com/mcp' }), 'has "youtube" in its name');
  });

  it('excludes registry servers published under a Google or GitHub domain, or named after them', () => {
    assert.equal(
      excludedProviderReason({ url: 'https://x.example.com/mcp', registryName: 'com.google.cloud/run' }),
      'is published under com.google.cloud',
    );
    assert.equal(
      excludedProviderReason({ url: 'https://x.example.com/mcp', registryName: 'io.github.someone/github-mcp-server' }),
      'has "github" in its registry name',
    );
  });

  it('keeps a server whose publisher merely has an io.github namespace', () => {
    assert.equal(
      excludedProviderReason({ name: 'Weather', url: 'https://weather.example.com/mcp', registryName: 'io.github.someone/weather' }),
      undefined,
    );
  });
});
