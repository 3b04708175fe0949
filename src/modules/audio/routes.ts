import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import { access, defineRoute } from '../../core/permissions.ts';
import { errorBody } from '../../core/errors.ts';
import { NotJson, Uuid } from '../../core/schemas.ts';
import type { AudioResponse, AudioService } from './service.ts';

/** Sends a chunk's WAV as audio.read answered it: the whole, a range, or 416 in the one error shape (audio, share and public links). */
export function answerAudio(reply: FastifyReply, res: AudioResponse) {
  reply.code(res.status).headers(res.headers);
  if (res.status === 416) {
    reply.header('content-type', 'application/json; charset=utf-8');
    return errorBody('RANGE_NOT_SATISFIABLE', `The requested range lies outside the audio (${res.headers['content-range']})`);
  }
  return res.body;
}

export function audioRoutes(audio: AudioService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/audio/:chunkId',
      action: 'audio.read',
      access: access.role('viewer'),
      team: { resource: 'chunk', param: 'chunkId' },
      audit: [],
      summary: "A chunk's audio as WAV, with HTTP range requests (206, 416, Accept-Ranges: bytes)",
      tags: ['audio'],
      schema: {
        params: Type.Object({ chunkId: Uuid }),
        response: { 200: NotJson('audio/wav', 'The whole WAV'), 206: NotJson('audio/wav', 'The range asked for') },
      },
      handler: async ({ actor, params, req, reply }) => {
        return answerAudio(reply, await audio.read(actor.teamId, params.chunkId, req.headers.range));
      },
    }),
  ];
}
