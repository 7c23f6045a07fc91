export * from './call-ingestion.service';
export * from './clock';
export * from './dial-window';
export * from './call-control.provider';
