import { environmentSchema, loadConfig } from '@app/config';
import { readEnvTemplate, strayTemplateLines } from './support/env-template';

describe('.env.example', () => {
  const template = readEnvTemplate('.env.example');

  it('names every variable of the configuration schema, once, and nothing else', () => {
    const names = template.map((variable) => variable.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(Object.keys(environmentSchema.shape).sort());
    expect(strayTemplateLines('.env.example')).toEqual([]);
  });

  it('says in one line what each one is', () => {
    expect(template.filter((variable) => !variable.comment?.trim()).map((variable) => variable.name)).toEqual([]);
  });

  it('is a configuration that boots as it is', () => {
    expect(() => loadConfig(Object.fromEntries(template.map(({ name, value }) => [name, value])))).not.toThrow();
  });
});
