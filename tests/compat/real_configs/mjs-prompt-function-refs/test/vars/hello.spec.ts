import { expect, it } from 'vitest';
it('says hello', () => expect(1).toBe(1));
