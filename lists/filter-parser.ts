// Syntax-only parser for the list endpoints' `filter` query parameter.
//
// Grammar (no whitespace skipping: a space is an ordinary character of a bare value, and anywhere
// else it is a syntax error, so what the client sent is exactly what gets compared):
//
//   filter    := expr (';' expr)*                      top-level ';' means AND
//   expr      := ('and' | 'or') '(' expr (',' expr)* ')' | condition
//   condition := field '[' op ']' '=' value
//   field     := ident ('.' ident)*                    ident = [A-Za-z_][A-Za-z0-9_]*
//   value     := item                                  for every op except `in`
//              | item ('|' item)*                      for `in`
//   item      := '"' (char | '\"' | '\\')* '"'         quoted: may hold , ; ( ) | and " (escaped)
//              | (any char except , ; ( ) " and, inside an `in` list, |)+
//
// The query string was already URL-decoded once by the HTTP framework; decoding again here would
// let `%2C` smuggle a separator past the client's quoting, so we never do.
// Whether a field exists or a value has the right type is checked later (domain/list-filters.ts),
// against the resource's catalogue.
import { CambioError } from '../domain/errors';
import { FILTER_OPS, type FilterNode, type FilterOp } from '../domain/list-filters';

export { FILTER_OPS };
export type { FilterNode, FilterOp };

// Abuse limits: each condition becomes a SQL predicate (possibly a jsonb subquery), and the
// parser recurses once per nesting level, so both are bounded before any SQL is built.
export const MAX_FILTER_DEPTH = 10;
export const MAX_FILTER_CONDITIONS = 50;
export const MAX_IN_VALUES = 100;

const isOp = (s: string): s is FilterOp => (FILTER_OPS as readonly string[]).includes(s);

// Sticky regexes so each token is matched in place, without slicing the input.
const FIELD_RE = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/y;
const OP_RE = /[A-Za-z]*/y;

/** Parses `input` into an AST; `undefined` or a blank string means "no filter" (null). */
export function parseFilters(input: string | undefined): FilterNode | null {
  if (input === undefined || input.trim() === '') return null;
  return new Parser(input).parseTop();
}

class Parser {
  private pos = 0;
  private conditions = 0;

  constructor(private readonly src: string) {}

  parseTop(): FilterNode {
    const children = [this.parseExpr(0)];
    while (this.peek() === ';') {
      this.pos++;
      children.push(this.parseExpr(0));
    }
    if (this.pos < this.src.length) {
      this.fail(`unexpected '${this.src[this.pos]}'; expected ';' or the end of the filter`);
    }
    return children.length === 1 ? children[0] : { kind: 'and', children };
  }

  private parseExpr(depth: number): FilterNode {
    const start = this.pos;
    const name = this.match(FIELD_RE);
    if (name === '') {
      const found = this.pos < this.src.length ? `'${this.src[this.pos]}'` : 'the end of the filter';
      this.fail(`expected a condition such as field[eq]=value, and(...) or or(...), found ${found}`);
    }
    const next = this.peek();
    if (next === '(') return this.parseGroup(name, start, depth);
    if (next === '[') return this.parseCondition(name);
    this.fail(`expected '[' after field '${name}'`);
  }

  private parseGroup(name: string, start: number, depth: number): FilterNode {
    if (name !== 'and' && name !== 'or') {
      this.fail(`unknown group '${name}(...)'; only and(...) and or(...) are supported`, start);
    }
    if (depth + 1 > MAX_FILTER_DEPTH) {
      this.fail(`groups are nested more than ${MAX_FILTER_DEPTH} levels deep`, start);
    }
    this.pos++; // '('
    if (this.peek() === ')') this.fail(`${name}(...) needs at least one condition`);
    const children = [this.parseExpr(depth + 1)];
    while (this.peek() === ',') {
      this.pos++;
      children.push(this.parseExpr(depth + 1));
    }
    if (this.peek() !== ')') {
      this.fail(`expected ',' or ')' to continue ${name}( opened at position ${start + 1}`);
    }
    this.pos++;
    return { kind: name, children };
  }

  private parseCondition(field: string): FilterNode {
    this.pos++; // '['
    const opStart = this.pos;
    const op = this.match(OP_RE);
    if (this.peek() !== ']') this.fail(`expected ']' to close the operator of field '${field}'`);
    if (!isOp(op)) {
      this.fail(`unknown operator '${op}' for field '${field}'; expected one of ${FILTER_OPS.join(', ')}`, opStart);
    }
    this.pos++;
    if (this.peek() !== '=') this.fail(`expected '=' after ${field}[${op}]`);
    this.pos++;
    if (++this.conditions > MAX_FILTER_CONDITIONS) {
      this.fail(`too many conditions (at most ${MAX_FILTER_CONDITIONS} are allowed)`);
    }
    const values = [this.parseItem(field, op === 'in')];
    if (op === 'in') {
      while (this.peek() === '|') {
        this.pos++;
        if (values.length >= MAX_IN_VALUES) {
          this.fail(`too many values for ${field}[in] (at most ${MAX_IN_VALUES})`);
        }
        values.push(this.parseItem(field, true));
      }
    }
    return { kind: 'cond', field, op, values };
  }

  private parseItem(field: string, inList: boolean): string {
    const start = this.pos;
    let value: string;
    if (this.peek() === '"') {
      value = this.parseQuoted();
    } else {
      while (
        this.pos < this.src.length &&
        !this.isSeparator(this.src[this.pos], inList) &&
        this.src[this.pos] !== '"'
      ) {
        this.pos++;
      }
      if (this.peek() === '"') {
        this.fail(`unexpected '"' inside the value of '${field}'; quote the whole value instead`);
      }
      value = this.src.slice(start, this.pos);
      if (value === '') {
        this.fail(`empty value for field '${field}' (write "" for an empty string)`);
      }
    }
    // A closing quote must be followed by a separator, otherwise `"a"b` would silently drop `b`.
    if (this.pos < this.src.length && !this.isSeparator(this.src[this.pos], inList)) {
      this.fail(`unexpected '${this.src[this.pos]}' after the quoted value of '${field}'`);
    }
    return value;
  }

  private parseQuoted(): string {
    const open = this.pos;
    this.pos++; // opening quote
    let out = '';
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined) this.fail(`unterminated quoted value`, open);
      if (c === '"') {
        this.pos++;
        return out;
      }
      if (c === '\\') {
        // Only \" and \\ are escapes. Anything else is rejected rather than guessed at, so a
        // client never gets a silently different value from the one it meant.
        const n = this.src[this.pos + 1];
        if (n !== '"' && n !== '\\') this.fail(`invalid escape in quoted value; only \\" and \\\\ are allowed`);
        out += n;
        this.pos += 2;
      } else {
        out += c;
        this.pos++;
      }
    }
  }

  // Characters that end a value; `|` only separates values inside an `in` list, elsewhere it is
  // an ordinary character.
  private isSeparator(c: string, inList: boolean): boolean {
    return c === ',' || c === ';' || c === '(' || c === ')' || (inList && c === '|');
  }

  private match(re: RegExp): string {
    re.lastIndex = this.pos;
    const m = re.exec(this.src);
    if (m === null) return '';
    this.pos += m[0].length;
    return m[0];
  }

  private peek(): string | undefined {
    return this.src[this.pos];
  }

  private fail(message: string, at: number = this.pos): never {
    const position = at + 1; // 1-based, as a human counts characters
    throw new CambioError('INVALID_FILTER', `Invalid filter at position ${position}: ${message}`, { position });
  }
}
