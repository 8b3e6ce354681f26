import assert from 'node:assert/strict';
import { metricsPort, readConfig } from '../../services/shared/config.ts';

/** Where each process serves its metrics (docs/operations.md, "Metrics"): one METRICS_PORT names all three. */
describe('METRICS_HOST and METRICS_PORT', () => {
  const ports = (env: NodeJS.ProcessEnv) => {
    const config = readConfig(env);
    return [metricsPort(config, 'api'), metricsPort(config, 'pay'), metricsPort(config, 'workflows')];
  };

  it('default to 127.0.0.1 and 9464, the pay process one above, the workflows process two above', () => {
    assert.equal(readConfig({}).metricsHost, '127.0.0.1');
    assert.equal(readConfig({}).metricsPort, undefined);
    assert.deepEqual(ports({}), [9464, 9465, 9466]);
  });

  it('take the values given; 0 is a free port for every process', () => {
    assert.equal(readConfig({ METRICS_HOST: '10.0.0.5' }).metricsHost, '10.0.0.5');
    assert.deepEqual(ports({ METRICS_PORT: '9100' }), [9100, 9101, 9102]);
    assert.deepEqual(ports({ METRICS_PORT: '0' }), [0, 0, 0]);
  });

  it('refuse a port that is no port, or leaves the workflows process none', () => {
    assert.throws(() => readConfig({ METRICS_PORT: 'nine' }), /METRICS_PORT must be a non-negative integer, got "nine"/);
    assert.throws(() => readConfig({ METRICS_PORT: '65534' }), /METRICS_PORT must be at most 65533 \(the workflows process listens on it \+ 2\), got 65534/);
    assert.deepEqual(ports({ METRICS_PORT: '65533' }), [65533, 65534, 65535]);
  });
});
