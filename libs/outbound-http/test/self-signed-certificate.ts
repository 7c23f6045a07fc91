/**
 * A certificate for 127.0.0.1 that signs itself (valid 2020-2120), and its key: made for tests only, so that a TLS
 * server on loopback can present a certificate no client trusts. Never used for anything else.
 */
export const SELF_SIGNED = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSC8bN+mGniuUoh+e
Z/B6/tjnR+hXtg5IrjrjPCJgY/yhRANCAASwWnoOO/lSYVWK4mr1qFvLPPhyu3gb
1m4FVbHq7fuT7h0ZPgREMek9qz7DTDL26+/GIop6QJDjG+2jfmRM8Cvw
-----END PRIVATE KEY-----
`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBWTCB/6ADAgECAgEBMAoGCCqGSM49BAMCMBQxEjAQBgNVBAMMCTEyNy4wLjAu
MTAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAwMDAwMFowFDESMBAGA1UEAwwJ
MTI3LjAuMC4xMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEsFp6Djv5UmFViuJq
9ahbyzz4crt4G9ZuBVWx6u37k+4dGT4ERDHpPas+w0wy9uvvxiKKekCQ4xvto35k
TPAr8KNAMD4wDwYDVR0RBAgwBocEfwAAATAMBgNVHRMBAf8EAjAAMB0GA1UdDgQW
BBQOb3gWq60m6EOhnnD8YVQclGcifjAKBggqhkjOPQQDAgNJADBGAiEAmAH42mE9
H8wSd5iLF7vmmEppsyGLWtTDUVnmCuYPs8MCIQC+Ia4HOjABqKErKgCLt8OhcV0P
cv/lb+ea+eIU0o1ZGA==
-----END CERTIFICATE-----
`,
};
