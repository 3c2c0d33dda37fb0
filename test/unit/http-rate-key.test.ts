// The HTTP rate limit counts an IPv6 peer by its /64 (docs/transports.md "Limits"): a client picking a fresh
// address of its prefix for every request is still one client.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRateLimiter, rateKey } from '../../src/transports/http/limits.ts';

test('rateKey: IPv6 by its /64 in every spelling; IPv4 and IPv4-mapped as the IPv4 address', () => {
  for (const a of ['2001:db8:1:2::1', '2001:0db8:0001:0002:ffff:eeee:dddd:cccc', '2001:DB8:1:2:0:0:0:9', '2001:db8:1:2::a%eth0']) assert.is(rateKey(a), '2001:db8:1:2::/64', a);
  assert.is(rateKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.is(rateKey('::1'), '0:0:0:0::/64');
  assert.is(rateKey('fe80::1:2:3:4'), 'fe80:0:0:0::/64');
  assert.is(rateKey('::ffff:192.0.2.7'), '192.0.2.7');
  assert.is(rateKey('192.0.2.7'), '192.0.2.7');
  assert.is.not(rateKey('2001:db8:1:2::1'), rateKey('2001:db8:1:3::1'));
});

test('addresses rotated inside one /64 share one allowance', () => {
  const limiter = createRateLimiter(10, () => 1_000);
  let refused = 0;
  for (let i = 0; i < 50; i++) if (limiter.take(rateKey(`2001:db8:1:2::${(i + 1).toString(16)}`)) > 0) refused++;
  assert.is(refused, 40);
});

test.run();
