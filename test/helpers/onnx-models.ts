/**
 * Small ONNX graphs made in the test, in the way scripts/build-builtin-model.ts builds the built-in
 * model (onnx-proto): fixed logits whatever the audio, and optionally an embedding output that
 * measures the audio, so a test can tell which samples reached the model.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
type Node = InstanceType<typeof onnx.NodeProto>;
type Tensor = InstanceType<typeof onnx.TensorProto>;

/** A float32 tensor's name and shape; a string is a symbolic dimension. */
export const valueInfo = (name: string, dims: Array<number | string>) =>
  onnx.ValueInfoProto.create({
    name,
    type: onnx.TypeProto.create({
      tensorType: onnx.TypeProto.Tensor.create({
        elemType: FLOAT,
        shape: onnx.TensorShapeProto.create({
          dim: dims.map((d) =>
            typeof d === 'string'
              ? onnx.TensorShapeProto.Dimension.create({ dimParam: d })
              : onnx.TensorShapeProto.Dimension.create({ dimValue: d }),
          ),
        }),
      }),
    }),
  });

const floats = (name: string, dims: number[], values: number[]): Tensor =>
  onnx.TensorProto.create({ name, dims, dataType: FLOAT, rawData: new Uint8Array(Float32Array.from(values).buffer) });

const int64s = (name: string, values: number[]): Tensor =>
  onnx.TensorProto.create({
    name,
    dims: [values.length],
    dataType: onnx.TensorProto.DataType.INT64,
    rawData: new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer),
  });

function node(opType: string, input: string[], output: string, ints: Record<string, number[]> = {}): Node {
  return onnx.NodeProto.create({
    opType,
    input,
    output: [output],
    name: output,
    attribute: Object.entries(ints).map(([name, v]) =>
      name === 'keepdims'
        ? onnx.AttributeProto.create({ name, i: v[0], type: onnx.AttributeProto.AttributeType.INT })
        : onnx.AttributeProto.create({ name, ints: v, type: onnx.AttributeProto.AttributeType.INTS }),
    ),
  });
}

export interface FixedLogitsModel {
  /** The input's length (a number), or a symbolic name. */
  inputSamples: number | string;
  /** One logit per label, the same for every input. */
  logits: number[];
  /**
   * An output "embedding" [1, 4] of the audio's mean and peak magnitude before and after sample
   * `splitAt`: [mean|x[0..split)|, mean|x[split..)|, max|x[0..split)|, max|x[split..)|].
   */
  embeddingSplitAt?: number;
  /** The first dimension of the input and outputs is free ("batch"), as in BirdNET's ONNX builds: windows can run together. */
  batch?: boolean;
  /**
   * Work the logits do not depend on: a 1-D convolution of the input (64 filters of 64 taps, about
   * 600 M multiply-adds per window), so a window takes milliseconds, as a real model's does, and
   * windows sent together find the model busy.
   */
  slow?: boolean;
}

/** A graph's ONNX bytes (opset 13). */
export const encodeModel = (graph: InstanceType<typeof onnx.GraphProto>): Buffer =>
  Buffer.from(onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 7, opsetImport: [{ domain: '', version: 13 }], graph })).finish());

/** A one-node model: input float32 [1, inputSize] → Identity → output [1, inputSize]. */
export const identityModel = (inputSize: number): Buffer =>
  encodeModel(
    onnx.GraphProto.create({
      name: 'identity',
      node: [onnx.NodeProto.create({ opType: 'Identity', input: ['x'], output: ['y'] })],
      input: [valueInfo('x', [1, inputSize])],
      output: [valueInfo('y', [1, inputSize])],
    }),
  );

/** The ONNX bytes of a model that answers `logits` for any input (opset 13). */
export function fixedLogitsModel(m: FixedLogitsModel): Buffer {
  const k = m.logits.length;
  const nodes: Node[] = [
    // The input takes part (times zero), so the graph cannot be run without it.
    node('ReduceMean', ['x'], 'mean', { axes: [1], keepdims: [1] }),
    node('Mul', [m.slow ? 'busy' : 'mean', 'zero'], 'nothing'),
    node('Add', ['nothing', 'fixed'], 'logits'),
  ];
  const initializer: Tensor[] = [floats('zero', [], [0]), floats('fixed', [1, k], m.logits)];
  if (m.slow) {
    const taps = 64;
    const filters = 64;
    initializer.push(
      int64s('unsqueezeAxis', [1]),
      floats(
        'kernel',
        [filters, 1, taps],
        Array.from({ length: filters * taps }, (_, i) => Math.sin(i)),
      ),
    );
    nodes.unshift(
      onnx.NodeProto.create({ opType: 'Unsqueeze', input: ['x', 'unsqueezeAxis'], output: ['x3'], name: 'x3' }),
      onnx.NodeProto.create({
        opType: 'Conv',
        input: ['x3', 'kernel'],
        output: ['conv'],
        name: 'conv',
        attribute: [onnx.AttributeProto.create({ name: 'kernel_shape', ints: [taps], type: onnx.AttributeProto.AttributeType.INTS })],
      }),
      node('ReduceMean', ['conv'], 'convMean', { axes: [1, 2], keepdims: [1] }),
      onnx.NodeProto.create({
        opType: 'Flatten',
        input: ['convMean'],
        output: ['convFlat'],
        name: 'convFlat',
        attribute: [onnx.AttributeProto.create({ name: 'axis', i: 1, type: onnx.AttributeProto.AttributeType.INT })],
      }),
      node('Add', ['mean', 'convFlat'], 'busy'),
    );
  }
  const rows = m.batch ? 'batch' : 1;
  const output = [valueInfo('logits', [rows, k])];
  if (m.embeddingSplitAt !== undefined) {
    const n = typeof m.inputSamples === 'number' ? m.inputSamples : 1 << 30;
    initializer.push(int64s('s0', [0]), int64s('split', [m.embeddingSplitAt]), int64s('end', [n]), int64s('axis1', [1]));
    nodes.push(
      node('Abs', ['x'], 'magnitude'),
      node('Slice', ['magnitude', 's0', 'split', 'axis1'], 'before'),
      node('Slice', ['magnitude', 'split', 'end', 'axis1'], 'after'),
      node('ReduceMean', ['before'], 'mean_before', { axes: [1], keepdims: [1] }),
      node('ReduceMean', ['after'], 'mean_after', { axes: [1], keepdims: [1] }),
      node('ReduceMax', ['before'], 'max_before', { axes: [1], keepdims: [1] }),
      node('ReduceMax', ['after'], 'max_after', { axes: [1], keepdims: [1] }),
      onnx.NodeProto.create({
        opType: 'Concat',
        input: ['mean_before', 'mean_after', 'max_before', 'max_after'],
        output: ['embedding'],
        name: 'embedding',
        attribute: [onnx.AttributeProto.create({ name: 'axis', i: 1, type: onnx.AttributeProto.AttributeType.INT })],
      }),
    );
    output.push(valueInfo('embedding', [rows, 4]));
  }
  return encodeModel(
    onnx.GraphProto.create({ name: 'fixed-logits', node: nodes, initializer, input: [valueInfo('x', [rows, m.inputSamples])], output }),
  );
}

/** BirdNET's confidence of a float32 logit: 1 / (1 + exp(-sensitivity × clip(logit, -20, 20))). */
export function sigmoidOf(logit: number, sensitivity: number): number {
  const x = Math.max(-20, Math.min(20, Math.fround(logit)));
  return 1 / (1 + Math.exp(-sensitivity * x));
}

/**
 * A species-range model of BirdNET's shape (its "meta model", issue 35) (input [1, 3]: latitude, longitude, week; output [1, 2]):
 * label 0 (blackbird) scores 0.9 north of 50° and 0.001 south of it; label 1 (great tit) scores
 * week / 48, so it is out of range (< 0.03) in week 1 only.
 */
export function rangeModel(): Buffer {
  const f = (name: string, values: number[], dims: number[] = []) =>
    onnx.TensorProto.create({
      name,
      dims,
      dataType: onnx.TensorProto.DataType.FLOAT,
      rawData: new Uint8Array(Float32Array.from(values).buffer),
    });
  const i64 = (name: string, values: number[]) =>
    onnx.TensorProto.create({
      name,
      dims: [values.length],
      dataType: onnx.TensorProto.DataType.INT64,
      rawData: new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer),
    });
  const n = (opType: string, input: string[], output: string, attribute: InstanceType<typeof onnx.AttributeProto>[] = []) =>
    onnx.NodeProto.create({ opType, input, output: [output], name: output, attribute });
  return encodeModel(
    onnx.GraphProto.create({
      name: 'range',
      node: [
        n('Slice', ['x', 'i0', 'i1', 'axis1'], 'lat'),
        n('Slice', ['x', 'i2', 'i3', 'axis1'], 'week'),
        n('Sub', ['lat', 'fifty'], 'latOff'),
        n('Mul', ['latOff', 'steep'], 'latSteep'),
        n('Sigmoid', ['latSteep'], 'north'),
        n('Mul', ['north', 'span'], 'northSpan'),
        n('Add', ['northSpan', 'floor'], 's0'),
        n('Div', ['week', 'weeks'], 's1'),
        n('Concat', ['s0', 's1'], 'scores', [
          onnx.AttributeProto.create({ name: 'axis', i: 1, type: onnx.AttributeProto.AttributeType.INT }),
        ]),
      ],
      initializer: [
        i64('i0', [0]),
        i64('i1', [1]),
        i64('i2', [2]),
        i64('i3', [3]),
        i64('axis1', [1]),
        f('fifty', [50]),
        f('steep', [100]),
        f('span', [0.899]),
        f('floor', [0.001]),
        f('weeks', [48]),
      ],
      input: [valueInfo('x', [1, 3])],
      output: [valueInfo('scores', [1, 2])],
    }),
  );
}
