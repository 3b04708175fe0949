/** Alert rules and channels of a team: lists, saving, deleting, a channel's test send and its recent deliveries. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body, type RequestBody } from '../client';

export type AlertRule = Body<'/api/alert-rules/rules', 'get'>['rules'][number];
export type RuleBody = RequestBody<'/api/alert-rules/rules', 'post'>;
export type RuleConditions = NonNullable<RuleBody['conditions']>;
export type SystemRule = NonNullable<RuleConditions['system']>;
export type AlertChannel = Body<'/api/alert-rules/channels', 'get'>['channels'][number];
export type ChannelBody = RequestBody<'/api/alert-rules/channels', 'post'>;
export type ChannelUpdate = RequestBody<'/api/alert-rules/channels/{id}', 'put'>;
export type ChannelConfig = ChannelBody['config'];
export type ChannelType = ChannelBody['type'];
export type ChannelTest = Body<'/api/alert-rules/channels/{id}/test', 'post'>;
export type Delivery = Body<'/api/alert-rules/channels/{id}/deliveries', 'get'>['deliveries'][number];

export const CHANNEL_TYPES: ChannelType[] = [
  'email',
  'webhook',
  'chat_blocks',
  'chat_cards',
  'chat_embeds',
  'chat_bot',
  'mqtt_home_assistant',
  'birdweather',
];
/** Channels that receive every detection by themselves (issue 38): rules do not send to them. */
export const isStreamChannel = (type: ChannelType) => type === 'mqtt_home_assistant' || type === 'birdweather';

export const alertRuleKeys = {
  rules: (tenantId: string) => ['alert-rules', tenantId] as const,
  channels: (tenantId: string) => ['alert-channels', tenantId] as const,
  deliveries: (channelId: string) => ['alert-deliveries', channelId] as const,
};

export function useAlertRules(tenantId: string) {
  return useQuery({
    queryKey: alertRuleKeys.rules(tenantId),
    enabled: !!tenantId,
    queryFn: () => data(api.GET('/api/alert-rules/rules', { params: { query: { tenantId } } })),
  });
}

export function useAlertChannels(tenantId: string) {
  return useQuery({
    queryKey: alertRuleKeys.channels(tenantId),
    enabled: !!tenantId,
    queryFn: () => data(api.GET('/api/alert-rules/channels', { params: { query: { tenantId } } })),
  });
}

/** Creating (no id) or replacing (id) a rule, and deleting one; each refreshes the team's rules. */
export function useRuleMutations(tenantId: string) {
  const qc = useQueryClient();
  const refresh = () => void qc.invalidateQueries({ queryKey: alertRuleKeys.rules(tenantId) });
  return {
    save: useMutation({
      mutationFn: ({ id, body }: { id?: string; body: Omit<RuleBody, 'tenantId'> }) =>
        data(
          id
            ? api.PUT('/api/alert-rules/rules/{id}', { params: { path: { id } }, body: { ...body, tenantId } })
            : api.POST('/api/alert-rules/rules', { body: { ...body, tenantId } }),
        ),
      onSuccess: refresh,
    }),
    remove: useMutation({
      mutationFn: (id: string) => data(api.DELETE('/api/alert-rules/rules/{id}', { params: { path: { id } } })),
      onSuccess: refresh,
    }),
  };
}

/** Creating or updating a channel (an update leaves out what is kept), and deleting one (rules lose it too). */
export function useChannelMutations(tenantId: string) {
  const qc = useQueryClient();
  const refresh = () => void qc.invalidateQueries({ queryKey: alertRuleKeys.channels(tenantId) });
  return {
    save: useMutation({
      mutationFn: ({ id, body }: { id?: string; body: Omit<ChannelBody, 'tenantId'> | Omit<ChannelUpdate, 'tenantId'> }) =>
        data(
          id
            ? api.PUT('/api/alert-rules/channels/{id}', { params: { path: { id } }, body: { ...body, tenantId } })
            : api.POST('/api/alert-rules/channels', { body: { ...(body as Omit<ChannelBody, 'tenantId'>), tenantId } }),
        ),
      onSuccess: refresh,
    }),
    remove: useMutation({
      mutationFn: (id: string) => data(api.DELETE('/api/alert-rules/channels/{id}', { params: { path: { id } } })),
      onSuccess: () => {
        refresh();
        void qc.invalidateQueries({ queryKey: alertRuleKeys.rules(tenantId) });
      },
    }),
  };
}

/** Sends a sample alert through the channel; the answer says what the receiver replied. */
export function useTestChannel(tenantId: string, channelId: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => data(api.POST('/api/alert-rules/channels/{id}/test', { params: { path: { id: channelId } } })),
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: alertRuleKeys.channels(tenantId) });
      void qc.invalidateQueries({ queryKey: alertRuleKeys.deliveries(channelId) });
    },
  });
}

/** The channel's recent deliveries, newest first (admins; loaded when shown). */
export function useDeliveries(channelId: string, enabled: boolean) {
  return useQuery({
    queryKey: alertRuleKeys.deliveries(channelId),
    enabled,
    queryFn: () =>
      data(api.GET('/api/alert-rules/channels/{id}/deliveries', { params: { path: { id: channelId }, query: { limit: 20 } } })),
  });
}
