// A beneficiary's holder: the person or company a payment instruction pays.
export interface HolderAddress {
  addressLine1: string;
  addressLine2?: string;
  city: string;
  state?: string;
  country: string;
  postalCode: string;
}

export interface IndividualHolder {
  type: 'INDIVIDUAL';
  firstName: string;
  lastName: string;
  taxId: { value: string; type: 'CPF' };
  dateOfBirth: string;
  address: HolderAddress;
}

export interface CompanyHolder {
  type: 'COMPANY';
  legalName: string;
  taxId: { value: string; type: 'CNPJ' };
  address: HolderAddress;
}

/** What `beneficiaries.holder` stores: the request's holder with the tax id normalised to bare characters. */
export type Holder = IndividualHolder | CompanyHolder;
