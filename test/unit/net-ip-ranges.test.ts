import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  blockReason,
  blockedHostname,
  canonicalIp,
  formatIPv6,
  parseIPv4,
  parseIPv4Loose,
  parseIPv6,
  ssrfBlocked,
} from '../../src/net/ip-ranges.ts';

// [address, expected reason (null = public, allowed)]
const TABLE: [string, string | null][] = [
  // public IPv4
  ['8.8.8.8', null],
  ['1.1.1.1', null],
  ['93.184.216.34', null],
  ['100.63.255.255', null], // just below CGNAT
  ['100.128.0.0', null], // just above CGNAT
  ['172.15.255.255', null],
  ['172.32.0.0', null],
  ['169.253.255.255', null],
  ['192.167.255.255', null],
  ['192.169.0.0', null],
  ['198.17.255.255', null],
  ['198.20.0.0', null],
  ['223.255.255.255', null],
  ['9.255.255.255', null],
  ['11.0.0.0', null],
  ['126.255.255.255', null],
  ['128.0.0.0', null],
  // loopback
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['127.1.2.3', 'loopback'],
  // private
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.0.1', 'private'],
  ['192.168.255.255', 'private'],
  // CGNAT
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  // link-local and metadata
  ['169.254.0.1', 'link-local'],
  ['169.254.255.255', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['169.254.170.2', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['192.0.0.192', 'metadata'],
  // unspecified / this network
  ['0.0.0.0', 'unspecified'],
  ['0.255.255.255', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  // multicast, broadcast, reserved
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['254.1.1.1', 'reserved'],
  ['192.0.0.8', 'reserved'],
  ['192.88.99.1', 'reserved'],
  // documentation and benchmark
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.200', 'documentation'],
  ['198.18.0.1', 'benchmark'],
  ['198.19.255.255', 'benchmark'],
  // odd IPv4 spellings (inet_aton / WHATWG forms)
  ['0x7f.1', 'loopback'],
  ['0x7f000001', 'loopback'],
  ['2130706433', 'loopback'],
  ['017700000001', 'loopback'],
  ['0177.0.0.1', 'loopback'],
  ['127.1', 'loopback'],
  ['127.0.1', 'loopback'],
  ['127.0.0.1.', 'loopback'],
  ['0', 'unspecified'],
  ['0x', 'unspecified'],
  ['012.1', 'private'], // 10.0.0.1
  ['0xa9.0xfe.0xa9.0xfe', 'metadata'],
  ['2852039166', 'metadata'], // 169.254.169.254
  ['0xA9FEA9FE', 'metadata'],
  ['134744072', null], // 8.8.8.8
  // public IPv6
  ['2606:4700::1111', null],
  ['2001:4860:4860::8888', null],
  ['2a00:1450:4001:80b::200e', null],
  ['[2606:4700:4700::1111]', null],
  // IPv6 specials
  ['::', 'unspecified'],
  ['0:0:0:0:0:0:0:0', 'unspecified'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fc00::1', 'private'],
  ['fdff:ffff::1', 'private'],
  ['fd00:ec2::254', 'metadata'],
  ['FD00:EC2:0:0:0:0:0:254', 'metadata'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['fec0::1', 'private'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001:2::1', 'benchmark'],
  ['2001:10::1', 'reserved'],
  ['100::1', 'reserved'],
  ['5f00::1', 'reserved'],
  ['4000::1', 'reserved'],
  ['64:ff9b:1::1', 'private'],
  // IPv4-mapped
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
  ['[::ffff:127.0.0.1]', 'loopback'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::ffff:8.8.8.8', null],
  // IPv4-translated (SIIT) and IPv4-compatible
  ['::ffff:0:127.0.0.1', 'loopback'],
  ['::ffff:0:8.8.8.8', null],
  ['::127.0.0.1', 'loopback'],
  ['::7f00:1', 'loopback'],
  ['::10.1.2.3', 'private'],
  ['::8.8.8.8', null],
  // NAT64
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::a9fe:a9fe', 'metadata'],
  ['64:ff9b::192.168.1.1', 'private'],
  ['64:ff9b::8.8.8.8', null],
  // 6to4
  ['2002:7f00:1::', 'loopback'],
  ['2002:c0a8:0101::1', 'private'],
  ['2002:a9fe:a9fe::1', 'metadata'],
  ['2002:0808:0808::1', null],
  // Teredo: server v4 in bits 32..63, client v4 inverted in the last 32 bits
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'documentation'], // RFC 4380 example: client 192.0.2.45
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'], // client ~80ff:fffe = 127.0.0.1
  ['2001:0:7f00:1::1', 'loopback'], // server 127.0.0.1
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', null], // server 65.54.227.120, client 8.8.8.8
  // not addresses at all
  ['', 'invalid'],
  ['example.com', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
  ['256.1.1.1', 'invalid'],
  ['08.1.1.1', 'invalid'],
  ['1::2::3', 'invalid'],
  [':::', 'invalid'],
  ['1:2:3:4:5:6:7:8:9', 'invalid'],
  ['12345::1', 'invalid'],
  ['::ffff:300.1.1.1', 'invalid'],
  ['0x1g', 'invalid'],
];

for (const [addr, want] of TABLE) {
  test(`blockReason ${JSON.stringify(addr)} → ${want}`, () => {
    assert.is(blockReason(addr), want);
  });
}

test('what WHATWG URL hands over for odd spellings is canonical, and still blocked', () => {
  for (const raw of ['http://0x7f.1/', 'http://2130706433/', 'http://017700000001/', 'http://127.1/', 'http://0177.0.0.1/', 'http://127.0.0.1./', 'http://%31%32%37.0.0.1/']) {
    const host = new URL(raw).hostname;
    assert.is(host, '127.0.0.1', raw);
    assert.is(blockReason(host), 'loopback', raw);
  }
  const v6 = new URL('http://[::ffff:127.0.0.1]/').hostname;
  assert.is(v6, '[::ffff:7f00:1]');
  assert.is(blockReason(v6), 'loopback');
  assert.is(new URL('http://0x/').hostname, '0.0.0.0');
});

test('parsers', () => {
  assert.is(parseIPv4('127.0.0.1'), 0x7f000001);
  assert.is(parseIPv4('255.255.255.255'), 0xffffffff);
  assert.is(parseIPv4('01.2.3.4'), null); // strict form refuses leading zeros...
  assert.is(parseIPv4Loose('01.2.3.4'), 0x01020304); // ...the loose one reads them as octal
  assert.is(parseIPv4Loose('010.0.0.1'), 0x08000001);
  assert.is(parseIPv4Loose('1.2.3.256'), null);
  assert.is(parseIPv4Loose('1.16777216'), null);
  assert.is(parseIPv4Loose('4294967296'), null);
  assert.is(parseIPv4Loose('4294967295'), 0xffffffff);
  assert.equal(parseIPv6('::'), [0, 0, 0, 0, 0, 0, 0, 0]);
  assert.equal(parseIPv6('1::'), [1, 0, 0, 0, 0, 0, 0, 0]);
  assert.equal(parseIPv6('::ffff:1.2.3.4'), [0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
  assert.is(parseIPv6('1.2.3.4'), null);
  assert.is(parseIPv6('1:2:3:4:5:6:7::8'), null);
  assert.is(parseIPv6('1::2:'), null);
});

test('canonical text', () => {
  assert.is(canonicalIp('0:0:0:0:0:0:0:1'), '::1');
  assert.is(canonicalIp('[2001:DB8:0:0:1:0:0:1]'), '2001:db8::1:0:0:1');
  assert.is(canonicalIp('::ffff:7f00:1'), '::ffff:127.0.0.1');
  assert.is(canonicalIp('0x7f.1'), '127.0.0.1');
  assert.is(canonicalIp('example.com'), null);
  assert.is(formatIPv6([1, 0, 0, 2, 0, 0, 0, 3]), '1:0:0:2::3');
  assert.is(formatIPv6([1, 2, 3, 4, 5, 6, 7, 8]), '1:2:3:4:5:6:7:8');
  assert.is(formatIPv6([1, 0, 2, 3, 4, 5, 6, 7]), '1:0:2:3:4:5:6:7'); // a single zero group stays
});

test('block_private_ips: false lifts private and CGNAT ranges only', () => {
  for (const a of ['10.0.0.1', '172.16.0.1', '192.168.1.1', '100.64.0.1', 'fd12::1', '::ffff:10.0.0.1', '64:ff9b::10.0.0.1']) {
    assert.is.not(ssrfBlocked(a, true), null, a);
    assert.is(ssrfBlocked(a, false), null, a);
  }
  for (const a of ['127.0.0.1', '::1', '169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '0.0.0.0', '224.0.0.1', 'fe80::1', 'nonsense']) {
    assert.is.not(ssrfBlocked(a, false), null, a);
  }
  assert.is(ssrfBlocked('8.8.8.8'), null);
});

test('blocked host names', () => {
  assert.is(blockedHostname('localhost'), 'loopback');
  assert.is(blockedHostname('api.localhost'), 'loopback');
  assert.is(blockedHostname('metadata.google.internal'), 'metadata');
  assert.is(blockedHostname('instance-data'), 'metadata');
  assert.is(blockedHostname('localhost.example.com'), null);
  assert.is(blockedHostname('example.com'), null);
});

test.run();
