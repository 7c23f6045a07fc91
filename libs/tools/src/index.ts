export * from './tool-arguments';
export * from './tool-call.types';
export * from './tool-request.builder';
export * from './tool.executor';
