import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { access, defineRoute } from '../../core/permissions.ts';
import { DEFAULT_LIMIT, NoContent, Nullable, Open, Paging } from '../../core/schemas.ts';
import { badRequest } from '../../core/errors.ts';
import { readUpload } from '../../core/upload.ts';
import { MAX_LABELS_BYTES, MAX_MODEL_BYTES, type ModelsService, type ModelUpload } from './service.ts';
import { PublicModelList } from './schemas.ts';

const ModelId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
/** A model as the admin routes answer it (presentModel in service.ts); open, so an added field still reaches the client. */
const ModelView = Open({
  id: Type.String(),
  name: Type.String(),
  version: Nullable(Type.String()),
  description: Nullable(Type.String()),
  enabled: Type.Boolean(),
  isDefault: Type.Boolean(),
  builtin: Type.Boolean(),
  kind: Type.Union([Type.Literal('classifier'), Type.Literal('range')], {
    description: 'classifier: hears audio; range: a species-range model (latitude, longitude, week → one score per label) that flags out-of-range detections',
  }),
  labelCount: Type.Integer(),
  unknownLabelCount: Type.Integer(),
  unknownLabels: Type.Array(Type.String()),
  modelBytes: Type.Number(),
  sha256: Nullable(Type.String()),
  /** The known family it is (GET /admin/models/known), if any; `family` below says what it listens to. */
  knownFamily: Nullable(Type.String()),
  /** The line its detections credit: the model's own attribution, else its known family's. */
  attribution: Nullable(Type.String()),
  sourceUrl: Nullable(Type.String()),
  uploadedBy: Nullable(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  family: Type.Union([Type.Literal('3s-48k'), Type.Literal('5s-32k'), Type.Literal('custom')], {
    description: "What the model listens to: 3 s at 48 kHz (BirdNET 2.4), 5 s at 32 kHz (BirdNET 3.0, Perch 2), or the upload's rate and window",
  }),
  sampleRate: Type.Integer({ description: 'Input rate in Hz; chunks (48 kHz) are resampled to it' }),
  windowSeconds: Type.Number({ description: 'Audio one inference covers; windows longer than a chunk span the chunks after it' }),
  inputSamples: Type.Integer(),
  embeddingOutput: Nullable(Type.String({ description: "The output stored as each detection's window embedding" })),
  embeddingSize: Type.Integer(),
});
const LabelView = Type.Object({
  index: Type.Integer(),
  label: Type.String(),
  speciesCode: Type.String(),
  scientificName: Type.String(),
  commonName: Type.String(),
  category: Type.String(),
  own: Type.Boolean(),
});
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });

/** A number field of the upload (absent or blank: undefined). */
function numberField(value: string | undefined, name: string): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (!/^\d+(\.\d+)?$/.test(v)) throw badRequest(`${name} must be a number, got ${JSON.stringify(v.slice(0, 20))}`);
  return Number(v);
}

/**
 * The upload's parts: fields name, version?, description?, sampleRate? (Hz) and windowSeconds? (for
 * a model whose input length is no known family); files model (.onnx) and labels (.txt).
 */
async function readModelUpload(req: FastifyRequest): Promise<ModelUpload> {
  const { files, fields } = await readUpload(req, {
    files: {
      model: {
        maxBytes: MAX_MODEL_BYTES,
        missing: { code: 'INVALID_MODEL', message: 'The "model" file (.onnx) is required' },
        check: ({ filename }) => {
          if (!/\.onnx$/i.test(filename)) throw badRequest('The model file must be an .onnx file', 'INVALID_MODEL');
        },
      },
      labels: { maxBytes: MAX_LABELS_BYTES, missing: { code: 'INVALID_LABELS', message: 'The "labels" file (.txt) is required' } },
    },
    fields: {
      names: ['name', 'version', 'description', 'sampleRate', 'windowSeconds', 'knownFamily', 'attribution', 'kind'],
      maxBytes: 2000,
      read: (fields) => {
        const name = fields.name?.trim();
        if (!name || name.length > 200) throw badRequest('name is required (1-200 characters)');
        if (fields.version !== undefined && fields.version.length > 50) throw badRequest('version may have at most 50 characters');
        if (fields.attribution !== undefined && fields.attribution.length > 300) throw badRequest('attribution may have at most 300 characters');
        const sampleRate = numberField(fields.sampleRate, 'sampleRate');
        const windowSeconds = numberField(fields.windowSeconds, 'windowSeconds');
        const kind = fields.kind?.trim() || 'classifier';
        if (kind !== 'classifier' && kind !== 'range') throw badRequest('kind must be "classifier" or "range"');
        const modelKind: 'classifier' | 'range' = kind;
        // The range checks are the classifier's (family.ts), which knows the model's input length.
        return {
          name,
          version: fields.version?.trim() || null,
          description: fields.description?.trim() || null,
          sampleRate,
          windowMs: windowSeconds === undefined ? undefined : Math.round(windowSeconds * 1000),
          knownFamily: fields.knownFamily?.trim() || null,
          attribution: fields.attribution?.trim() || null,
          kind: modelKind,
        };
      },
    },
  });
  return { ...fields, model: files.model, labels: files.labels };
}

export function modelsRoutes(models: ModelsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/models',
      action: 'models.list',
      access: access.authenticated,
      audit: [],
      summary: 'Enabled classifier models a team may pick (team setting inference_model)',
      tags: ['models'],
      schema: { response: { 200: PublicModelList } },
      handler: async () => {
        const { models: all } = await models.list();
        return {
          models: all
            .filter((m) => m.enabled && m.kind === 'classifier')
            .map(({ id, name, version, description, isDefault, builtin, labelCount, knownFamily, attribution }) => ({
              id, name, version, description, isDefault, builtin, labelCount, knownFamily, attribution,
            })),
        };
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/admin/models',
      action: 'admin.models.list',
      access: access.hubAdmin,
      audit: [],
      summary: 'Every classifier model, the default first',
      tags: ['admin', 'models'],
      schema: { response: { 200: Type.Object({ models: Type.Array(ModelView) }) } },
      handler: () => models.list(),
    }),

    defineRoute({
      method: 'POST',
      url: '/admin/models',
      action: 'admin.models.upload',
      access: access.hubAdmin,
      audit: ['admin.birdnet_model_uploaded'],
      summary:
        'Upload a model: multipart fields name, version?, description?, sampleRate? and windowSeconds? (a model whose input length is neither 144000 nor 160000 samples), ' +
        'knownFamily? (a family of GET /admin/models/known), attribution?, kind? (classifier, the default, or range: a species-range model with input [1, 3] latitude, longitude, week), ' +
        'files model (.onnx) and labels (.txt: BirdNET labels or eBird codes, one per output)',
      tags: ['admin', 'models'],
      schema: { response: { 201: ModelView } },
      handler: async ({ actor, req, reply }) => {
        const created = await models.upload(actor, await readModelUpload(req));
        reply.code(201);
        return created;
      },
    }),

    defineRoute({
      method: 'PUT',
      url: '/admin/models/:id',
      action: 'admin.models.update',
      access: access.hubAdmin,
      audit: ['admin.birdnet_model_updated'],
      summary: 'Edit name, version, description or enabled',
      tags: ['admin', 'models'],
      schema: {
        params: ModelId,
        body: Type.Object(
          {
            name: Type.Optional(Text(200)),
            version: Type.Optional(Type.Union([Type.String({ maxLength: 50 }), Type.Null()])),
            description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
            enabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: { 200: ModelView },
      },
      handler: ({ actor, params, body }) => models.update(actor, params.id, body),
    }),

    defineRoute({
      method: 'POST',
      url: '/admin/models/:id/default',
      action: 'admin.models.set_default',
      access: access.hubAdmin,
      audit: ['admin.birdnet_model_set_default'],
      summary: "Make this model the hub default (teams without their own pick use it)",
      tags: ['admin', 'models'],
      schema: { params: ModelId, response: { 200: ModelView } },
      handler: ({ actor, params }) => models.setDefault(actor, params.id),
    }),

    defineRoute({
      method: 'DELETE',
      url: '/admin/models/:id',
      action: 'admin.models.delete',
      access: access.hubAdmin,
      audit: ['admin.birdnet_model_deleted'],
      summary: 'Delete an uploaded model (409 for the built-in and the default model); teams that picked it follow the default',
      tags: ['admin', 'models'],
      schema: { params: ModelId, response: { 204: NoContent } },
      handler: async ({ actor, params }) => {
        await models.remove(actor, params.id);
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/admin/models/:id/labels',
      action: 'admin.models.labels',
      access: access.hubAdmin,
      audit: [],
      summary: "The model's outputs in order and the species each maps into (search in label, code and names; own=true: only species the catalog does not know)",
      tags: ['admin', 'models'],
      schema: {
        params: ModelId,
        querystring: Type.Object({ search: Type.Optional(Text(100)), own: Type.Optional(Type.Boolean()), ...Paging }, { additionalProperties: false }),
        response: { 200: Type.Object({ labels: Type.Array(LabelView), total: Type.Integer() }) },
      },
      handler: ({ params, query }) => models.labels(params.id, { search: query.search, own: query.own, limit: query.limit ?? DEFAULT_LIMIT, offset: query.offset ?? 0 }),
    }),

    defineRoute({
      method: 'PUT',
      url: '/admin/models/:id/labels/:index',
      action: 'admin.models.labels.remap',
      access: access.hubAdmin,
      audit: ['admin.birdnet_model_updated'],
      summary: 'Map one output into another species of the species table; later detections of that output take its code and names',
      tags: ['admin', 'models'],
      schema: {
        params: Type.Object({ id: ModelId.properties.id, index: Type.Integer({ minimum: 0, maximum: 1_000_000 }) }),
        body: Type.Object({ speciesCode: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        response: { 200: LabelView },
      },
      handler: ({ actor, params, body }) => models.remapLabel(actor, params.id, params.index, body.speciesCode),
    }),
  ];
}
