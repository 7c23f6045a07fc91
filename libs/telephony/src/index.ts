export * from './call-dialer';
export * from './livekit-call-dialer';
export * from './livekit-sip-provisioner';
export * from './local-call-dialer';
export * from './local-sip-provisioner';
export * from './sip-provisioner';
