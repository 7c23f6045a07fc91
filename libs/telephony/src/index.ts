export * from './livekit-sip-provisioner';
export * from './local-sip-provisioner';
export * from './sip-provisioner';
