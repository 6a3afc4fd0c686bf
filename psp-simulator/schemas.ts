import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';

// Request bodies as the BCB's API Pix (openapi.yaml, release 2.9) and the payout API of the PSPs define them, so
// a connector that sends a malformed body is refused here as a bank would refuse it. The BCB writes its patterns
// unanchored; a bank matches the whole value, so they are anchored here.

const VALOR = '^\\d{1,10}\\.\\d{2}$';
export const TXID = /^[a-zA-Z0-9]{26,35}$/;
export const ID_35 = /^[a-zA-Z0-9]{1,35}$/;
export const E2E = /^[a-zA-Z0-9]{32}$/;

const pessoa = {
  oneOf: [
    {
      type: 'object',
      required: ['cpf', 'nome'],
      properties: { cpf: { type: 'string', pattern: '^\\d{11}$' }, nome: { type: 'string', maxLength: 200 } },
      additionalProperties: false,
    },
    {
      type: 'object',
      required: ['cnpj', 'nome'],
      properties: { cnpj: { type: 'string', pattern: '^[0-9A-Z]{14}$' }, nome: { type: 'string', maxLength: 200 } },
      additionalProperties: false,
    },
  ],
};

const cobSolicitada = {
  type: 'object',
  required: ['calendario', 'valor', 'chave'],
  properties: {
    calendario: {
      type: 'object',
      properties: { expiracao: { type: 'integer', minimum: 1, maximum: 2147483647 } },
      additionalProperties: false,
    },
    devedor: pessoa,
    loc: { type: 'object', properties: { id: { type: 'integer' } }, additionalProperties: false },
    valor: {
      type: 'object',
      required: ['original'],
      properties: {
        original: { type: 'string', pattern: VALOR },
        modalidadeAlteracao: { type: 'integer', minimum: 0, maximum: 1 },
      },
      additionalProperties: false,
    },
    chave: { type: 'string', minLength: 1, maxLength: 77 },
    solicitacaoPagador: { type: 'string', maxLength: 140 },
    infoAdicionais: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        required: ['nome', 'valor'],
        properties: { nome: { type: 'string', maxLength: 50 }, valor: { type: 'string', maxLength: 200 } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
};

const devolucaoSolicitada = {
  type: 'object',
  required: ['valor'],
  properties: {
    valor: { type: 'string', pattern: VALOR },
    natureza: { enum: ['ORIGINAL', 'RETIRADA'] },
    descricao: { type: 'string', maxLength: 140 },
  },
  additionalProperties: false,
};

const webhookSolicitado = {
  type: 'object',
  required: ['webhookUrl'],
  properties: { webhookUrl: { type: 'string', format: 'uri', pattern: '^https?://' } },
  additionalProperties: false,
};

const envioPix = {
  type: 'object',
  required: ['valor', 'pagador', 'favorecido'],
  properties: {
    valor: { type: 'string', pattern: VALOR },
    pagador: {
      type: 'object',
      required: ['chave'],
      properties: { chave: { type: 'string', minLength: 1, maxLength: 77 }, infoPagador: { type: 'string' } },
      additionalProperties: false,
    },
    favorecido: {
      type: 'object',
      required: ['chave'],
      properties: { chave: { type: 'string', minLength: 1, maxLength: 77 }, cpf: { type: 'string' } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);

export const validate = {
  cob: ajv.compile(cobSolicitada),
  devolucao: ajv.compile(devolucaoSolicitada),
  webhook: ajv.compile(webhookSolicitado),
  envio: ajv.compile(envioPix),
};

/** Ajv errors as API Pix `violacoes`: what was wrong and where. */
export function violacoes(errors: ErrorObject[] | null | undefined) {
  return (errors ?? []).map((e) => ({
    razao: e.message ?? 'invalid',
    propriedade: e.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(body)',
  }));
}
