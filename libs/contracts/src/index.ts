export * from './errors';
export * from './validation';
export * from './pagination';
export * from './dto/api-key.dto';
export * from './dto/auth.dto';
export * from './dto/language.dto';
export * from './dto/pagination.dto';
export * from './dto/user.dto';
