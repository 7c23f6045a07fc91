import 'reflect-metadata';
import { runProcess } from '@app/platform';
import { createApiApp } from './api.app';

runProcess(createApiApp, (config) => config.port);
