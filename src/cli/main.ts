/**
 * The `weir` command: parses the command line with commander and dispatches to one file per
 * command. Every usage error is one line on stderr starting `weir: ` and exits 2.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { errorMessage } from '../core/errors.ts';
import { adviseCommand } from './advise-command.ts';
import { checkpointsCommand } from './checkpoints-command.ts';
import {
  cancelCommand,
  DEFAULT_SAVEPOINT_DIR,
  savepointCommand,
  stopCommand,
  type CancelFlags,
  type SavepointFlags,
  type StopFlags,
} from './control-commands.ts';
import type { DropSlotFlags } from './cdc-command.ts';
import { demoCommand, type DemoFlags } from './demo-command.ts';
import { EXIT_CODE_HELP, EXIT_JOB_FAILED, EXIT_OK, EXIT_USAGE, UsageError, isUsageError } from './exit.ts';
import { oneLine } from './format.ts';
import { listCommand } from './list-command.ts';
import { packageVersion } from '../core/package-version.ts';
import { runCommand, type RunFlags } from './run-command.ts';
import { disposeCommand } from './savepoint-dispose.ts';
import { inspectCommand } from './savepoint-inspect.ts';
import { simCommand, type SimFlags } from './sim-command.ts';
import { taskManagerCommand, type TaskManagerFlags } from './taskmanager-command.ts';
import { portArgument, WEB_PORT_ENV } from './web-port.ts';

function positiveInt(what: string): (value: string) => number {
  return (value) => {
    const n = /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`${what} must be an integer >= 1`);
    return n;
  };
}

function nonNegativeInt(what: string): (value: string) => number {
  return (value) => {
    const n = /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`${what} must be an integer >= 0`);
    return n;
  };
}

function buildProgram(setExit: (code: number) => void): { program: Command; current: () => string } {
  let current = '';
  const program = new Command('weir')
    .description('Weir: stream processing with Chandy-Lamport checkpoints and exactly-once state')
    .exitOverride()
    .configureOutput({ outputError: () => {} }) // errors are printed by main, one line each
    .showSuggestionAfterError(true)
    .version(packageVersion(), '-V, --version', "print weir's version")
    .addHelpText('after', exitCodesHelp())
    .hook('preSubcommand', (_cmd, sub) => {
      current = sub.name();
    });

  program
    .command('run')
    .description('run a job module (default export: (env) => void; may export options, name, onFinished)')
    .argument('<job-module>', 'a .ts or .js file')
    .option('-p, --parallelism <n>', 'default parallelism of the job', positiveInt('parallelism'))
    .option('--checkpoint-dir <dir>', 'store checkpoints in this directory (retained when the job ends)')
    .option('--checkpoint-interval <ms>', 'milliseconds between checkpoints', positiveInt('checkpoint interval'))
    .option(
      '--task-managers <n>',
      "run the subtasks in n task managers, each a worker thread (default: the module's options, else one per core, capped at the parallelism, at least 1)",
      positiveInt('the number of task managers'),
    )
    .option(
      '--in-thread',
      'run every subtask in this thread instead of task managers; a user function that never returns then blocks weir cancel, the REST API and the dashboard until the process is killed',
    )
    .option(
      '--slots-per-task-manager <m>',
      'slots per task manager, each holding subtask i of every operator (task managers x slots must reach the parallelism; default: as many as needed)',
      positiveInt('the number of slots'),
    )
    .option(
      '--from <checkpoint>',
      'start from a checkpoint, savepoint or job checkpoint directory (its newest that verifies, else the checkpoint its run was restored from)',
    )
    .option('--allow-non-restored-state', 'allow state in --from that no operator of the job claims')
    .option('--claim', 'take ownership of the --from checkpoint: retention may delete it later (default: never touched)')
    .option('--accept-duplicates', 'restore even where a sink committed output of a newer checkpoint and cannot roll it back (that output is committed again)')
    .option('-q, --quiet', 'no live progress display')
    .option(
      '--web-port <port>',
      `serve the dashboard, REST API and metrics on this port of 127.0.0.1 (default: $${WEB_PORT_ENV}, else an ephemeral port)`,
      portArgument,
    )
    .option(
      '--web-host <address>',
      'bind the web server (dashboard, REST, /healthz, /readyz) to this address instead of 127.0.0.1, e.g. 0.0.0.0 for Kubernetes probes; reads need no token there',
    )
    .option(
      '--listen <host:port>',
      'accept task manager processes (weir taskmanager --connect) at this address instead of starting worker threads; --task-managers n waits for n',
    )
    .option(
      '--task-manager-processes <n>',
      'start n task manager processes on this host (over TCP on 127.0.0.1)',
      positiveInt('the number of task manager processes'),
    )
    .option('--registration-timeout <ms>', 'with --listen: how long a deploy waits for task managers (default 60000)', positiveInt('registration timeout'))
    .option('--same-path', 'with --listen: task managers load the job module at the same path (checked by hash) instead of getting it shipped')
    .option('--token-file <file>', 'the cluster token task managers must present (default: $WEIR_CLUSTER_TOKEN, else one made in your weir directory)')
    .option('--tls-cert <file>', 'PEM certificate for mutual TLS with task managers (with --tls-key and --tls-ca)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert')
    .option('--tls-ca <file>', 'PEM certificate of the CA every side of the cluster trusts')
    .option('--insecure', 'listen on a non-loopback address without TLS (a network you trust)')
    .option(
      '--ha <url>',
      'high availability through this HA store (postgres://user@host:port/db or etcd://host:port): one leader per job, the others wait as standbys and take over from the newest checkpoint',
    )
    .option('--ha-job <name>', "the job's name in the HA store (default: the job module's name)")
    .option('--ha-lease <ms>', "a leader's lease in the HA store (default 10000; renewed three times per lease)", positiveInt('the lease'))
    .option('--ha-new-run', 'with --ha: run the job again from the start although the HA store says it ended (otherwise such a run does nothing)')
    .action(async (modulePath: string, flags: RunFlags) => setExit(await runCommand(modulePath, flags)));

  program
    .command('taskmanager')
    .description('run a task manager process that joins a job master over TCP and runs the subtasks it is given')
    .option('--connect <host:port>', "the job master's --listen address")
    .option('--ha <url>', 'instead of --connect: join whichever job master leads --ha-job in this HA store (PostgreSQL or etcd), and the next one after it')
    .option('--ha-job <name>', 'with --ha: the job whose leader to join')
    .option('--slots <n>', 'slots offered, each holding subtask i of every operator (default: one per core)', positiveInt('slots'))
    .option('--token-file <file>', "the cluster token (default: $WEIR_CLUSTER_TOKEN, else the one 'weir run' made in your weir directory on this host)")
    .option('--tls-cert <file>', 'PEM certificate for mutual TLS (with --tls-key and --tls-ca)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert')
    .option('--tls-ca <file>', 'PEM certificate of the CA every side of the cluster trusts')
    .option('--insecure', 'accept data connections on a non-loopback address without TLS')
    .option('--data-host <host>', 'the address peers reach this task manager at (default: the address the job master sees it connect from)')
    .option('--data-port <port>', 'the port of its data listener (default: any free port)', portArgument)
    .option('--bind <host>', 'the address its data listener binds (default: --data-host, else all interfaces)')
    .option('--retry', 'wait for a job master (again) instead of exiting when none answers')
    .option('--cache-dir <dir>', 'where shipped job modules are kept (default: $WEIR_HOME/job-code, else ~/.cache/weir/job-code)')
    .option('-q, --quiet', 'print errors only')
    .action(async (flags: TaskManagerFlags) => setExit(await taskManagerCommand(flags)));

  addSavepointCommands(program, setExit);

  program
    .command('list')
    .description("list your jobs running under 'weir run': id, name, state, control address, start time")
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean }) => setExit(await listCommand(flags)));

  program
    .command('checkpoints')
    .description('list the checkpoints and savepoints retained under a directory')
    .argument('<dir>', 'a checkpoint root, job directory, savepoint root or one checkpoint')
    .option('--json', 'print JSON')
    .action(async (dir: string, flags: { json?: boolean }) => setExit(await checkpointsCommand(dir, flags)));

  program
    .command('advise')
    .description("checkpoint advice from a running job's figures or the checkpoints retained under a job or checkpoint directory")
    .argument('<job|dir>', 'a running job (id, name or control address), a job directory or a checkpoint root')
    .option('--json', 'print JSON')
    .action(async (dir: string, flags: { json?: boolean }) => setExit(await adviseCommand(dir, flags)));

  program
    .command('demo')
    .description('run the bank-transfers demo with a crash part-way and verify exactly-once output')
    .option('--dir <dir>', 'a new or empty directory for checkpoints and output (default: a fresh temp dir)')
    .option('--web-port <port>', `serve the dashboard on this port of 127.0.0.1 (default: $${WEB_PORT_ENV}, else an ephemeral port)`, portArgument)
    .action(async (flags: DemoFlags) => setExit(await demoCommand(flags)));

  program
    .command('sim')
    .description('run seeds of the deterministic fault-injecting simulator (built-in scenarios or your job module)')
    .option('--seeds <n>', 'how many seeds to run (default 100)', positiveInt('seeds'))
    .option('--seed <s>', 'run one seed (replay)', nonNegativeInt('seed'))
    .option('--start <s>', 'first seed of --seeds (default 1)', nonNegativeInt('start'))
    .option('--mode <mode>', 'exactly-once, at-least-once, unaligned or aligned-timeout (default: cycle by seed)')
    .option('--job <name|module>', 'keyed-counts, join, union, file-sink, or a job module path (default: all scenarios)')
    .option('-v, --verbose', 'a line for every seed')
    .option('--trace', 'print the job events of the run (with --seed)')
    .action(async (flags: SimFlags) => setExit(await simCommand(flags)));

  return { program, current: () => current };
}

/** `weir savepoint <job>`, `weir savepoint dispose|inspect <path>`, `weir stop`, `weir cancel`. */
function addSavepointCommands(program: Command, setExit: (code: number) => void): void {
  const savepoint = program
    .command('savepoint')
    .description('take a savepoint of a running job (or: dispose, inspect a savepoint)')
    .usage('<job> [--dir <dir>] | dispose <path> | inspect <path> [--json]')
    .argument('<job>', "the job id (or name) or control address that 'weir run' printed")
    .option('--dir <dir>', `directory to write the savepoint under (default: ./${DEFAULT_SAVEPOINT_DIR})`)
    .action(async (job: string, flags: SavepointFlags) => setExit(await savepointCommand(job, flags)));
  const noDir = (sub: string) => {
    if (savepoint.opts<SavepointFlags>().dir !== undefined) throw new UsageError(`--dir is for 'weir savepoint <job>', not for 'weir savepoint ${sub}'`);
  };
  savepoint
    .command('dispose')
    .description('delete one savepoint directory (refuses anything that is not a savepoint)')
    .argument('<path>', 'a savepoint directory')
    .action(async (p: string) => {
      noDir('dispose');
      setExit(await disposeCommand(p));
    });
  savepoint
    .command('inspect')
    .description('show what a savepoint holds: format version, operators, states, keys, sizes')
    .argument('<path>', 'a savepoint (or checkpoint) directory')
    .option('--json', 'print JSON')
    .action(async (p: string, flags: { json?: boolean }) => {
      noDir('inspect');
      setExit(await inspectCommand(p, flags));
    });

  const cdc = program.command('cdc').description('PostgreSQL change data capture: the server objects a CDC source leaves behind');
  cdc
    .command('drop-slot')
    .description('drop the replication slots (and publications of the same name) of CDC sources that will not resume; they hold WAL until dropped')
    .argument('<slot...>', "slot names as 'weir run' warned of them (weir_cdc_<id>)")
    .option('--host <host>', 'server host (default PGHOST, else localhost)')
    .option('--port <port>', 'server port (default PGPORT, else 5432)', positiveInt('port'))
    .option('--database <db>', 'database (default PGDATABASE, else the user name)')
    .option('--user <user>', 'user (default PGUSER); the password comes from PGPASSWORD')
    .action(async (slots: string[], flags: DropSlotFlags) => setExit(await (await loadCdcCommand()).dropSlotCommand(slots, flags)));

  program
    .command('stop')
    .description('stop a running job with a savepoint: take it, commit the sinks, finish cleanly')
    .argument('<job>', "the job id (or name) or control address that 'weir run' printed")
    .option('--savepoint', 'take a savepoint (required)')
    .option('--dir <dir>', `directory to write the savepoint under (default: ./${DEFAULT_SAVEPOINT_DIR})`)
    .action(async (job: string, flags: StopFlags) => setExit(await stopCommand(job, flags)));

  program
    .command('cancel')
    .description('cancel a running job, optionally after a savepoint')
    .argument('<job>', "the job id (or name) or control address that 'weir run' printed")
    .option('--savepoint', 'take a savepoint first')
    .option('--dir <dir>', `directory to write the savepoint under (default: ./${DEFAULT_SAVEPOINT_DIR})`)
    .action(async (job: string, flags: CancelFlags) => setExit(await cancelCommand(job, flags)));
}

/** `weir help <command>` for a command that does not exist is a usage error, not the general help. */
function checkHelpTopic(program: Command, argv: readonly string[]): void {
  const [first, topic] = argv.slice(2);
  if (first !== 'help' || topic === undefined || topic.startsWith('-')) return;
  if (!program.commands.some((c) => c.name() === topic || c.aliases().includes(topic))) {
    throw new UsageError(`help: unknown command '${topic}' (see 'weir --help')`);
  }
}

function exitCodesHelp(): string {
  return `\nExit codes:\n${EXIT_CODE_HELP.map(([code, meaning]) => `  ${String(code).padEnd(5)}${meaning}`).join('\n')}\n`;
}

/** One line for a commander error: without its `error: ` prefix, with a pointer to the help. */
function commanderLine(err: CommanderError, command: string): string {
  let message = err.message.replace(/^error:\s*/, '').replace(/\s*\n\s*/g, ' ');
  const invalid = /^option '(?:-\w, )?(--[\w-]+)[^']*' argument '(.*)' is invalid\. (.*)$/.exec(message);
  if (invalid) message = `${invalid[1]}: ${invalid[3]}, got '${invalid[2]}'`;
  return `weir: ${message} (see 'weir ${command ? `${command} ` : ''}--help')`;
}

/** Runs the CLI; resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let exitCode = EXIT_OK;
  const { program, current } = buildProgram((code) => (exitCode = code));
  try {
    checkHelpTopic(program, argv);
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT_OK;
      // `weir help <command>` asked for help (exit code 0); `weir` with no command got it on stderr.
      if (err.code === 'commander.help') return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
      process.stderr.write(`${commanderLine(err, current())}\n`);
      return EXIT_USAGE;
    }
    const usage = isUsageError(err);
    process.stderr.write(`weir: ${usage ? '' : 'error: '}${oneLine(errorMessage(err))}\n`);
    if (!usage && process.env.WEIR_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    return usage ? EXIT_USAGE : EXIT_JOB_FAILED;
  }
}

/**
 * `weir cdc` needs the PostgreSQL driver, an optional peer dependency: it is loaded when the command
 * runs, so every other command works without it, and its absence is one clear error.
 */
async function loadCdcCommand(): Promise<typeof import('./cdc-command.ts')> {
  try {
    return await import('./cdc-command.ts');
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && /'pg(-logical-replication)?'/.test(String((err as Error).message))) {
      throw new UsageError('weir cdc needs the PostgreSQL driver beside Weir: npm install pg pg-logical-replication');
    }
    throw err;
  }
}
