import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, NoContent, Uuid } from '../../core/schemas.ts';
import type { AlertsService } from './alerts-service.ts';
import type { RulesService } from './rules-service.ts';
import type { ChannelsService } from './channels-service.ts';
import {
  AlertChannelList,
  AlertChannelView,
  AlertList,
  AlertListQuery,
  AlertRuleList,
  AlertRuleView,
  AlertView,
  ChannelCreateBody,
  ChannelTestResult,
  ChannelUpdateBody,
  DeliveryList,
  RuleCreateBody,
  RuleUpdateBody,
} from './schemas.ts';

const TeamQuery = Type.Object({ tenantId: Type.Optional(Uuid) });

/** The alerts a team received (spec §4 "Audio, alerts, exports"). */
export function alertsRoutes(alerts: AlertsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/alerts',
      action: 'alerts.list',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: "The team's alerts, newest first; ?acknowledged=true or false; total and unacknowledged count the filtered alerts",
      tags: ['alerts'],
      schema: { querystring: AlertListQuery, response: { 200: AlertList } },
      handler: ({ actor, query }) => alerts.list(actor.teamId, query),
    }),
    defineRoute({
      method: 'POST',
      url: '/alerts/:id/acknowledge',
      action: 'alerts.acknowledge',
      access: access.role('viewer'),
      team: { resource: 'alert', param: 'id' },
      audit: [],
      summary: 'Dismisses an alert for the whole team',
      tags: ['alerts'],
      schema: { params: IdParams, response: { 200: AlertView } },
      handler: ({ actor, params }) => alerts.acknowledge(actor, params.id),
    }),
    defineRoute({
      method: 'POST',
      url: '/alerts/acknowledge-all',
      action: 'alerts.acknowledge_all',
      access: access.role('viewer'),
      team: { in: 'body', key: 'tenantId' },
      audit: [],
      summary: 'Dismisses every unacknowledged alert of the team (docs/decisions.md)',
      tags: ['alerts'],
      schema: {
        body: Type.Object({ tenantId: Uuid }, { additionalProperties: false }),
        response: { 200: Type.Object({ acknowledged: Type.Integer() }) },
      },
      handler: async ({ actor }) => ({ acknowledged: await alerts.acknowledgeAll(actor) }),
    }),
  ];
}

/** Rules and channels (spec §4 "Alert rules, channels, scheduled exports"). */
export function alertRulesRoutes(rules: RulesService, channels: ChannelsService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/alert-rules/rules',
      action: 'alerts.rules.list',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: 'Rules of the team',
      tags: ['alerts'],
      schema: { querystring: TeamQuery, response: { 200: AlertRuleList } },
      handler: async ({ actor }) => ({ rules: await rules.list(actor.teamId) }),
    }),
    defineRoute({
      method: 'POST',
      url: '/alert-rules/rules',
      action: 'alerts.rules.create',
      access: access.role('admin'),
      team: { in: 'body', key: 'tenantId' },
      audit: ['admin.alert_rule_created'],
      summary: 'Creates a rule',
      tags: ['alerts'],
      schema: { body: RuleCreateBody, response: { 201: AlertRuleView } },
      handler: async ({ actor, body, reply }) => {
        reply.code(201);
        return rules.create(actor, body);
      },
    }),
    defineRoute({
      method: 'PUT',
      url: '/alert-rules/rules/:id',
      action: 'alerts.rules.update',
      access: access.role('admin'),
      team: { resource: 'alertRule', param: 'id' },
      audit: ['admin.alert_rule_updated'],
      summary: 'Replaces a rule (members left out take their defaults)',
      tags: ['alerts'],
      schema: { params: IdParams, body: RuleUpdateBody, response: { 200: AlertRuleView } },
      handler: ({ actor, params, body }) => rules.update(actor, params.id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/alert-rules/rules/:id',
      action: 'alerts.rules.delete',
      access: access.role('admin'),
      team: { resource: 'alertRule', param: 'id' },
      audit: ['admin.alert_rule_deleted'],
      summary: 'Deletes a rule; its alerts stay, unlinked',
      tags: ['alerts'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params, reply }) => {
        await rules.remove(actor, params.id);
        reply.code(204);
        return undefined;
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/alert-rules/channels',
      action: 'alerts.channels.list',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: 'Channels of the team; secrets never shown (hasSecret instead)',
      tags: ['alerts'],
      schema: { querystring: TeamQuery, response: { 200: AlertChannelList } },
      handler: async ({ actor }) => ({ channels: await channels.list(actor) }),
    }),
    defineRoute({
      method: 'POST',
      url: '/alert-rules/channels',
      action: 'alerts.channels.create',
      access: access.role('admin'),
      team: { in: 'body', key: 'tenantId' },
      audit: ['admin.alert_channel_created'],
      summary: 'Creates a channel; URLs are checked against the outbound address policy',
      tags: ['alerts'],
      schema: { body: ChannelCreateBody, response: { 201: AlertChannelView } },
      handler: async ({ actor, body, reply }) => {
        reply.code(201);
        return channels.create(actor, body);
      },
    }),
    defineRoute({
      method: 'PUT',
      url: '/alert-rules/channels/:id',
      action: 'alerts.channels.update',
      access: access.role('admin'),
      team: { resource: 'alertChannel', param: 'id' },
      audit: ['admin.alert_channel_updated'],
      summary: 'Updates a channel; a secret left out is kept, null removes it',
      tags: ['alerts'],
      schema: { params: IdParams, body: ChannelUpdateBody, response: { 200: AlertChannelView } },
      handler: ({ actor, params, body }) => channels.update(actor, params.id, body),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/alert-rules/channels/:id',
      action: 'alerts.channels.delete',
      access: access.role('admin'),
      team: { resource: 'alertChannel', param: 'id' },
      audit: ['admin.alert_channel_deleted'],
      summary: 'Deletes a channel and takes it out of every rule',
      tags: ['alerts'],
      schema: { params: IdParams, response: { 204: NoContent } },
      handler: async ({ actor, params, reply }) => {
        await channels.remove(actor, params.id);
        reply.code(204);
        return undefined;
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/alert-rules/channels/:id/test',
      action: 'alerts.channels.test',
      access: access.role('admin'),
      team: { resource: 'alertChannel', param: 'id' },
      audit: [],
      summary: "Sends a sample through the real pipeline (signature included) and reports the receiver's answer",
      tags: ['alerts'],
      schema: { params: IdParams, response: { 200: ChannelTestResult } },
      handler: ({ actor, params }) => channels.test(actor, params.id),
    }),
    defineRoute({
      method: 'GET',
      url: '/alert-rules/channels/:id/deliveries',
      action: 'alerts.channels.deliveries',
      access: access.role('admin'),
      team: { resource: 'alertChannel', param: 'id' },
      audit: [],
      summary: "The channel's recent deliveries, newest first (docs/decisions.md)",
      tags: ['alerts'],
      schema: {
        params: IdParams,
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) }),
        response: { 200: DeliveryList },
      },
      handler: async ({ actor, params, query }) => ({ deliveries: await channels.deliveries(actor.teamId, params.id, query.limit ?? 50) }),
    }),
  ];
}
