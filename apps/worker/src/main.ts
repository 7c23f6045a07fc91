import 'reflect-metadata';
import { runProcess } from '@app/platform';
import { createWorkerApp } from './worker.app';

runProcess(createWorkerApp, (config) => config.workerPort);
