import { describe, expect, it } from 'vitest';
import { databaseFailure } from '../../server/store/errors.js';

describe('database failures as HTTP answers', () => {
  it('reports a database in recovery or starting up as 503 with the reason', () => {
    expect(databaseFailure({ code: '57P03', message: 'the database system is in recovery mode' })).toEqual({
      status: 503,
      message: expect.stringContaining('in recovery'),
    });
    expect(databaseFailure({ code: '57P03', message: 'the database system is not yet accepting connections' })?.message).toContain('starting up');
    expect(databaseFailure({ code: '57P01', message: 'terminating connection due to administrator command' })?.status).toBe(503);
  });

  it('reports lost connections as 503', () => {
    expect(databaseFailure({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' })?.status).toBe(503);
    expect(databaseFailure(new Error('Connection terminated unexpectedly'))?.status).toBe(503);
    expect(databaseFailure({ code: '08006', message: 'connection failure' })?.status).toBe(503);
  });

  it('reports values the database refuses as 400', () => {
    expect(databaseFailure({ code: '22021', message: 'invalid byte sequence for encoding "UTF8": 0x00' })).toEqual({
      status: 400,
      message: expect.stringContaining('0x00'),
    });
    expect(databaseFailure({ code: '54000', message: 'index row requires 1040016 bytes, maximum size is 8191' })?.status).toBe(400);
  });

  it('leaves other failures to the generic handler', () => {
    expect(databaseFailure({ code: '23505', message: 'duplicate key' })).toBeUndefined();
    expect(databaseFailure(new Error('boom'))).toBeUndefined();
    expect(databaseFailure(undefined)).toBeUndefined();
  });
});
