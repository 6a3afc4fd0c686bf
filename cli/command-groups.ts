import type { Command } from 'commander';

type Register = (program: Command) => void;

/**
 * Every command group: the top-level commands it adds and how to load its module, in the order `cambio --help` lists
 * them. Loaded on demand because a group's module brings its use cases with it (the Temporal client, the rails'
 * registry with viem and the boleto client): `cambio customer create` needs none of them (decision 0295).
 */
const GROUPS: readonly { commands: readonly string[]; load: () => Promise<Register> }[] = [
  { commands: ['customer'], load: async () => (await import('./commands/customer')).customerCommands },
  { commands: ['account'], load: async () => (await import('./commands/account')).accountCommands },
  { commands: ['instruction'], load: async () => (await import('./commands/instruction')).instructionCommands },
  {
    commands: ['deposit', 'operation', 'withdrawal'],
    load: async () => (await import('./commands/operation')).operationCommands,
  },
  { commands: ['webhook'], load: async () => (await import('./commands/webhook')).webhookCommands },
  { commands: ['report'], load: async () => (await import('./commands/report')).reportCommands },
  { commands: ['payment'], load: async () => (await import('./commands/payment')).paymentCommands },
  { commands: ['schedule'], load: async () => (await import('./commands/schedule')).scheduleCommands },
  { commands: ['rates'], load: async () => (await import('./commands/rates')).ratesCommands },
  { commands: ['statement'], load: async () => (await import('./commands/statement')).statementCommands },
  { commands: ['books'], load: async () => (await import('./commands/books')).booksCommands },
  { commands: ['audit'], load: async () => (await import('./commands/audit')).auditCommands },
];

/**
 * Adds the group whose command `argv` names first (`cambio customer create`: the customer group alone); any other
 * command line (help, a typo, an option first) gets every group, so that help and commander's errors read as before.
 */
export async function addCommandGroups(program: Command, argv: readonly string[]): Promise<void> {
  const named = GROUPS.filter((g) => g.commands.includes(argv[2]));
  for (const group of named.length > 0 ? named : GROUPS) (await group.load())(program);
}
