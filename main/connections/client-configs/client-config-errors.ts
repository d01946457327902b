// Apart from the file parser: the agent endpoint's error answers name these without loading it.

/** A client's configuration file cannot be read or used; the message says which and why. */
export class ClientConfigError extends Error {
  override readonly name = 'ClientConfigError';
}

/** The client already has a server of the name this app would write (replaced only when asked). */
export class ClientEntryExistsError extends ClientConfigError {}
