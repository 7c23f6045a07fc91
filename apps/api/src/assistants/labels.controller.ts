import { Errors } from '@app/contracts';
import { LabelsService } from './labels.service';
import { namedColourController } from './named-colour-controller.factory';

export const LabelsController = namedColourController(
  { singular: 'label', noun: 'Label', notFound: Errors.labelNotFound },
  LabelsService,
);
