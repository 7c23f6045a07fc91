/**
 * What a SIP trunk's provisioning request asks for (`sip_provisioning_requests.changes`), as the API writes it and
 * the worker applies it: only the fields that change, the password sealed for the trunk.
 */
export interface TrunkChanges {
  phone_number?: string;
  nickname?: string | null;
  sip_username?: string;
  sip_password_sealed?: string;
  sip_address?: string;
  sip_calling_format?: string;
  inbound_authorization_type?: 'auth' | 'ip';
  allowed_inbound_ips?: string[] | null;
  outbound_proxy?: boolean;
  country_code?: string;
}
