/**
 * Home Assistant over the team's own MQTT broker (issue 38; docs/integrations.md). Each satellite
 * is a device with three sensors, announced by MQTT discovery: retained config messages on
 * `<discovery prefix>/sensor/<node id>/<object id>/config`, all reading one retained JSON state
 * on `<topic prefix>/<satellite id>/state`. Home Assistant's documented discovery shape: a
 * unique_id per entity, a device block whose identifiers group the three, value templates over
 * the state JSON.
 */
import type { StreamPayload } from './types.ts';

export interface HaTopics {
  topicPrefix: string;
  discoveryPrefix: string;
}

export interface MqttMessage {
  topic: string;
  payload: string;
  retain: boolean;
}

/** Home Assistant's node and object ids take letters, digits, '_' and '-' only; a UUID fits. */
const nodeOf = (satelliteId: string) => `chorus_${satelliteId.replace(/[^A-Za-z0-9_-]/g, '')}`;

export const stateTopic = (t: HaTopics, satelliteId: string) => `${t.topicPrefix}/${satelliteId}/state`;

const SENSORS = [
  {
    object: 'last_species',
    name: 'Last species',
    icon: 'mdi:bird',
    value_template: '{{ value_json.species }}',
    // The last species' other facts (scientific name, time, confidence) become its attributes.
    attributes: true,
  },
  {
    object: 'confidence',
    name: 'Confidence',
    icon: 'mdi:percent',
    value_template: '{{ (value_json.confidence * 100) | round(0) }}',
    unit_of_measurement: '%',
    state_class: 'measurement',
  },
  {
    object: 'count_today',
    name: 'Count today',
    icon: 'mdi:counter',
    value_template: '{{ value_json.countToday }}',
    unit_of_measurement: 'detections',
    // The count starts again each day; total_increasing reads a drop as a reset, not a loss.
    state_class: 'total_increasing',
  },
] as const;

/** The three discovery configs of one satellite. */
export function discoveryMessages(t: HaTopics, satellite: { id: string; name: string }, retain = true): MqttMessage[] {
  const node = nodeOf(satellite.id);
  const state = stateTopic(t, satellite.id);
  const device = { identifiers: [node], name: satellite.name, manufacturer: 'Chorus', model: 'Chorus satellite' };
  return SENSORS.map((s) => {
    const { object, attributes, ...rest } = { attributes: false, ...s };
    const config = {
      ...rest,
      unique_id: `${node}_${object}`,
      object_id: `${node}_${object}`,
      state_topic: state,
      ...(attributes ? { json_attributes_topic: state } : {}),
      device,
      origin: { name: 'Chorus' },
    };
    return { topic: `${t.discoveryPrefix}/sensor/${node}/${object}/config`, payload: JSON.stringify(config), retain };
  });
}

/** The satellite's state after a detection: what the three sensors read. */
export function stateMessage(t: HaTopics, p: StreamPayload, retain = true): MqttMessage {
  return {
    topic: stateTopic(t, p.satelliteId),
    payload: JSON.stringify({
      species: p.commonName,
      scientificName: p.scientificName,
      confidence: Math.round(p.confidence * 1000) / 1000,
      countToday: p.countToday,
      detectedAt: p.detectedAt,
    }),
    retain,
  };
}
