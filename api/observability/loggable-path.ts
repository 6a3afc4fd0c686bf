// A provider's notice URL carries a secret (`/rails/{rail}/{token}/...`: PIX's `/rails/pix/{PIX_WEBHOOK_TOKEN}/pix`,
// decision 0107): no log line may hold it. Every path a request writes to the log goes through here.

// Any path under /rails/{rail}/{token}, whatever follows it (a wrong method, a mistyped tail or another letter case
// is logged too).
const RAIL_TOKEN_IN_PATH = /^(\/rails\/[^/?#]+\/)[^/?#]+/i;

/** A path as the logs may show it: the notice URL's token replaced by `<token>`. */
export const loggablePath = (path: string): string => path.replace(RAIL_TOKEN_IN_PATH, '$1<token>');
