import { Errors } from '@app/contracts';
import { FoldersService } from './folders.service';
import { namedColourController } from './named-colour-controller.factory';

export const FoldersController = namedColourController(
  { singular: 'folder', noun: 'Folder', notFound: Errors.folderNotFound },
  FoldersService,
);
