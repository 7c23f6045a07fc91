const Sequencer = require('@jest/test-sequencer').default;

/** The key-slot check reads what the whole run sent to the cluster, so it runs after every other file. */
class KeySlotsLast extends Sequencer {
  sort(tests) {
    const last = (test) => (test.path.endsWith('key-slots.e2e-spec.ts') ? 1 : 0);
    return [...tests].sort((a, b) => last(a) - last(b));
  }
}

module.exports = KeySlotsLast;
