export * from './paginate';
