import { headersHelmetSets } from '../../../test/support/helmet-headers.js';
import { securityHeaderValues } from './security-headers.js';

describe('securityHeaderValues', () => {
  it('is what helmet sets per request, every header and value, X-Powered-By removed', () => {
    const perRequest = headersHelmetSets();
    expect(perRequest).not.toHaveProperty('x-powered-by');
    expect(Object.keys(perRequest).length).toBeGreaterThan(10);
    expect(securityHeaderValues()).toEqual(perRequest);
  });

  it('leaves out upgrade-insecure-requests, which would break Swagger UI on plain HTTP', () => {
    const policy = securityHeaderValues()['content-security-policy'];
    expect(policy).toContain("default-src 'self'");
    expect(policy).not.toContain('upgrade-insecure-requests');
  });
});
