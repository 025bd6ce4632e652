/**
 * The `highAvailability` option: job master high availability through an HA store, as `weir run
 * --ha <url>` gives it on the command line (the flags win over the option). `{ type: 'none' }`, the
 * default, runs one job master; `{ type: 'postgres' | 'etcd', url, job?, leaseMs? }` makes every job
 * master started with the job compete for its lease in that store: one leads, the others wait as
 * standbys (see docs/high-availability.md).
 */
import { ConfigError } from '../../core/errors.ts';
import { describeHaUrl, haUrlProblem } from '../../cluster/ha/ha-url.ts';
import { int, text, union } from './fields.ts';

/** A leader's lease when none is given (milliseconds); renewed three times per lease. */
export const DEFAULT_HA_LEASE_MS = 10_000;
/** The shortest lease accepted: below it the clock margin and three renewals leave no time to act. */
export const MIN_HA_LEASE_MS = 300;

/** The fields of a store's member: the same for every store, but for its URL. */
function storeMember(kind: 'postgres' | 'etcd', expect: string, urlDoc: string) {
  return {
    job: text({
      expect: 'a non-empty name',
      defaultDoc: "the job module's name",
      doc: "the job's name in the HA store: every job master of one job gives the same",
    }),
    leaseMs: int({
      min: MIN_HA_LEASE_MS,
      default: DEFAULT_HA_LEASE_MS,
      doc: "milliseconds of a leader's lease; a standby takes over within about one lease of a leader's death",
    }),
    // Last: a wrong field beside a missing URL is named first.
    url: text({
      expect,
      required: true,
      // The URL may carry a password: a rejection shows it masked.
      parse: (s: string, path: string) => {
        const problem = haUrlProblem(s, kind);
        if (problem !== null) throw new ConfigError(path, `${problem}: ${describeHaUrl(s)}`);
        return s;
      },
      doc: urlDoc,
    }),
  };
}

/** The members of the `highAvailability` union. */
export const HIGH_AVAILABILITY = {
  none: {},
  postgres: storeMember(
    'postgres',
    'a postgres:// or postgresql:// URL',
    'the PostgreSQL holding the leases and checkpoint pointers (postgres://user:password@host:port/db; the password is never shown)',
  ),
  etcd: storeMember(
    'etcd',
    'an etcd:// URL',
    'the etcd cluster holding the leases and checkpoint pointers (etcd://host:port[,host:port...]; ?prefix= sets the key root, default weir/ha/; a user:password is never shown)',
  ),
};

/** The `highAvailability` option. */
export const HIGH_AVAILABILITY_FIELD = union(HIGH_AVAILABILITY, {
  default: { type: 'none' },
  doc: "job master high availability: 'none', 'postgres' (a leader and standbys through a PostgreSQL lease) or 'etcd' (through an etcd lease)",
});
