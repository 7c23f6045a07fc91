export * from './address-policy';
export * from './crawler';
export * from './html-text';
export * from './outbound-http.client';
export * from './outbound-request.error';
export * from './outbound-http.module';
export { OutboundHttp } from './outbound-http.service';
