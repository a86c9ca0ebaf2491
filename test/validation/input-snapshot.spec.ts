import fc from 'fast-check';
import { snapshotInput } from '../../lib/validation/input-snapshot.helpers.js';

// The snapshot copies an ordinary array without holes or extra keys by index, and every other array
// key by key: both must give the same copy and the same issues.
describe('input snapshot of arrays', () => {
  it('copies a list as it is, a fresh array whose objects are copies too', () => {
    const item = { filename: 'a.txt', content: 'YQ==' };
    const list = ['a', 1, true, null, item];
    const { value, issues } = snapshotInput(list);
    expect(issues).toEqual([]);
    expect(value).toEqual(list);
    expect(value).not.toBe(list);
    expect((value as unknown[])[4]).not.toBe(item);
  });

  it('reads a hole as undefined, and names a getter by its index without calling it', () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(snapshotInput(['a', , 'c'])).toEqual({ value: ['a', undefined, 'c'], issues: [] });
    let calls = 0;
    const to = Object.defineProperty(['a', 'b'], 1, {
      enumerable: true,
      get: () => {
        calls++;
        return 'b';
      },
    });
    expect(snapshotInput({ to })).toEqual({
      value: { to: ['a', undefined] },
      issues: [{ path: 'to[1]', message: 'is a getter; pass plain data (a value, read once)' }],
    });
    expect(calls).toBe(0);
  });

  it('refuses a key that is not an index, with holes or without', () => {
    const extra = Object.assign(['a', 'b'], { x: 1 });
    // eslint-disable-next-line no-sparse-arrays
    const holeAndExtra = Object.assign([, 'b'], { x: 1 });
    for (const list of [extra, holeAndExtra]) {
      expect(snapshotInput({ to: list }).issues).toEqual([
        { path: 'to', message: 'is an array with an extra property "x"' },
      ]);
    }
  });

  it('an invalid Date is refused where it is (JSON would send null, its text is no date)', () => {
    expect(snapshotInput({ metadata: { at: [new Date(NaN)] } }).issues).toEqual([
      { path: 'metadata.at[0]', message: 'is an invalid Date' },
    ]);
    expect(snapshotInput({ at: new Date(0) }).value).toEqual({ at: '1970-01-01T00:00:00.000Z' });
  });

  it('a revoked Proxy, or a trap that throws, is named as unreadable where it is (never a TypeError)', () => {
    const { proxy: revoked, revoke } = Proxy.revocable({ to: ['ada@example.com'] }, {});
    revoke();
    const throwing = new Proxy(
      { subject: 'Hi' },
      {
        get: () => {
          throw new Error('trap');
        },
      },
    );
    const unreadable = 'cannot be read (a revoked Proxy?)';
    expect(snapshotInput(revoked).issues).toEqual([{ path: '', message: unreadable }]);
    expect(snapshotInput({ to: revoked }).issues).toEqual([{ path: 'to', message: unreadable }]);
    expect(snapshotInput({ attachments: [revoked] }).issues).toEqual([
      { path: 'attachments[0]', message: unreadable },
    ]);
    expect(snapshotInput({ variables: throwing }).issues).toEqual([
      { path: 'variables', message: unreadable },
    ]);
  });

  it('property: what passes serializes exactly as the input does', () => {
    const data = fc.anything({
      maxDepth: 3,
      withSparseArray: true,
      withNullPrototype: true,
      withDate: true,
      withTypedArray: true,
    });
    fc.assert(
      fc.property(data, (input) => {
        const { value, issues } = snapshotInput(input);
        if (issues.length === 0) expect(JSON.stringify(value)).toBe(JSON.stringify(input));
      }),
      { numRuns: 2000 },
    );
  });
});
