import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { Nullable, OneOf } from '../../core/schemas.ts';
import { KnownFamily, knownFamilies } from './known-models.ts';
import { INSTALL_STATES, type ModelInstaller } from './install-service.ts';

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });

/** An install's state, polled by the dashboard while the files arrive (install-service.ts InstallStatus). */
const InstallView = Type.Object({
  id: Type.String(),
  state: OneOf(INSTALL_STATES),
  receivedBytes: Type.Integer(),
  totalBytes: Nullable(Type.Integer()),
  modelId: Nullable(Type.String()),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  url: Type.String(),
  labelsUrl: Nullable(Type.String()),
  name: Type.String(),
  knownFamily: Nullable(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

const InstallBody = Type.Object(
  {
    url: Text(2000),
    labelsUrl: Type.Optional(Text(2000)),
    sha256: Type.Optional(Type.String({ maxLength: 64 })),
    name: Text(200),
    version: Type.Optional(Type.String({ maxLength: 50 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    /** A family of GET /admin/models/known: its attribution goes with the model's detections. */
    knownFamily: Type.Optional(Type.String({ maxLength: 50 })),
    attribution: Type.Optional(Type.String({ maxLength: 300 })),
    makeDefault: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** Issue 31: the known families and installing a model from a URL (hub admins; docs/model.md "Installing a model"). */
export function modelInstallRoutes(installer: ModelInstaller) {
  return [
    defineRoute({
      method: 'GET',
      url: '/admin/models/known',
      action: 'admin.models.known',
      access: access.hubAdmin,
      audit: [],
      summary: 'Known model families: input, classes, licence, attribution, where they are published, sizes and checksums when known',
      tags: ['admin', 'models'],
      schema: { response: { 200: Type.Object({ families: Type.Array(KnownFamily) }) } },
      handler: async () => ({ families: knownFamilies() }),
    }),

    defineRoute({
      method: 'POST',
      url: '/admin/models/install',
      action: 'admin.models.install',
      access: access.hubAdmin,
      audit: ['admin.birdnet_model_uploaded', 'admin.birdnet_model_set_default'],
      summary:
        'Install a model from an http(s) URL (labelsUrl: its labels; optional for BirdNET v2.4); 202 with the install to poll. ' +
        'A sha256 that does not match fails the install with CHECKSUM_MISMATCH and stores nothing',
      tags: ['admin', 'models'],
      schema: { body: InstallBody, response: { 202: InstallView } },
      handler: async ({ actor, body, reply }) => {
        const started = await installer.start(actor, { ...body, model: body.url, labels: body.labelsUrl ?? null });
        reply.code(202);
        return started;
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/admin/models/installs/:id',
      action: 'admin.models.install_status',
      access: access.hubAdmin,
      audit: [],
      summary: 'State of an install: downloading, verifying, installing, done (modelId) or failed (error {code, message})',
      tags: ['admin', 'models'],
      schema: { params: Type.Object({ id: Text(100) }), response: { 200: InstallView } },
      handler: ({ params }) => installer.status(params.id),
    }),
  ];
}
