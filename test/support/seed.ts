// Rows the HTTP tests need before the operations that create them exist in the API.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

export async function seedDataset(db: Knex, organizationId: string, fields: { tracking_id?: string; name?: string } = {}) {
  const [row] = await db('datasets')
    .insert({ organization_id: organizationId, name: fields.name ?? 'docs', tracking_id: fields.tracking_id ?? null })
    .returning('*');
  return row as { id: string; tracking_id: string | null };
}

export async function seedChunk(db: Knex, datasetId: string, fields: { tracking_id?: string; chunk_html?: string } = {}) {
  const [row] = await db('chunks')
    .insert({ dataset_id: datasetId, chunk_html: 'some text', ...fields })
    .returning('id');
  return row.id as string;
}

export async function seedGroup(db: Knex, datasetId: string, fields: { tracking_id?: string; name?: string; file_id?: string; tag_set?: string[] } = {}) {
  const [row] = await db('chunk_groups')
    .insert({ dataset_id: datasetId, name: 'group', ...fields })
    .returning('id');
  return row.id as string;
}

export async function seedFile(db: Knex, datasetId: string, fields: { id?: string; file_name?: string } = {}) {
  const [row] = await db('files')
    .insert({ dataset_id: datasetId, file_name: 'report.pdf', size: 1234, tag_set: 'a,b', metadata: JSON.stringify({ kind: 'report' }), ...fields })
    .returning('id');
  return row.id as string;
}

export async function seedCrawl(db: Knex, datasetId: string, fields: { url?: string; created_at?: Date } = {}) {
  const [row] = await db('crawl_requests')
    .insert({
      dataset_id: datasetId,
      url: 'https://example.com',
      interval: 'daily',
      next_crawl_at: new Date('2026-12-01T00:00:00Z'),
      crawl_options: JSON.stringify({ site_url: 'https://example.com', limit: 100, interval: 'daily', boost_titles: true, include_tags: ['main'] }),
      ...fields,
    })
    .returning('id');
  return row.id as string;
}

export async function seedRagQuery(
  db: Knex,
  datasetId: string,
  fields: {
    user_message?: string;
    top_score?: number;
    hallucination_score?: number;
    query_rating?: number;
    created_at?: Date;
    /** The component the call came from (metadata.component_props.componentName). */
    component_name?: string;
    has_clicks?: boolean;
  } = {},
) {
  const { component_name, ...columns } = fields;
  const [row] = await db('rag_queries')
    .insert({
      dataset_id: datasetId,
      search_id: '00000000-0000-4000-8000-000000000001',
      topic_id: '00000000-0000-4000-8000-000000000002',
      user_message: 'what is a chunk?',
      llm_response: 'A piece of a document.',
      results: JSON.stringify([{ id: 'x' }]),
      ...(component_name !== undefined && { metadata: JSON.stringify({ component_props: { componentName: component_name } }) }),
      ...columns,
    })
    .returning('id');
  return row.id as string;
}

export async function seedRecommendation(
  db: Knex,
  datasetId: string,
  fields: {
    id?: string;
    recommendation_type?: 'Chunk' | 'Group';
    positive_ids?: string[];
    top_score?: number;
    user_id?: string | null;
    request_params?: Record<string, unknown>;
    results?: unknown[];
    created_at?: Date | string;
  } = {},
) {
  const { request_params, results, ...rest } = fields;
  const [row] = await db('recommendation_queries')
    .insert({
      dataset_id: datasetId,
      id: fields.id ?? randomUUID(),
      recommendation_type: 'Chunk',
      positive_ids: [],
      negative_ids: [],
      positive_tracking_ids: [],
      negative_tracking_ids: [],
      request_params: JSON.stringify(request_params ?? {}),
      results: JSON.stringify(results ?? []),
      latency_ms: 3,
      ...rest,
    })
    .returning('id');
  return row.id as string;
}
