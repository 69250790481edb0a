// Migrations are listed here, in order, so they run the same from source, in tests and in a bundle.
import type { Knex } from 'knex';
import * as m001 from './001_core.js';
import * as m002 from './002_jobs.js';
import * as m003 from './003_lexical.js';
import * as m004 from './004_users.js';
import * as m005 from './005_datasets.js';
import * as m006 from './006_chunks.js';
import * as m007 from './007_search.js';
import * as m008 from './008_bm25.js';
import * as m009 from './009_vocabulary.js';
import * as m010 from './010_recommendations.js';
import * as m011 from './011_files.js';
import * as m012 from './012_ingest.js';
import * as m013 from './013_job_leases.js';
import * as m014 from './014_bm25_postings.js';
import * as m015 from './015_bm25_average_length.js';
import * as m016 from './016_chunk_tag_index.js';
import * as m017 from './017_drop_lexical_documents.js';
import * as m018 from './018_dataset_chunk_counts.js';
import * as m019 from './019_vector_changes.js';
import * as m020 from './020_held_vector_indexes.js';
import * as m021 from './021_bm25_statistics_function.js';
import * as m022 from './022_tag_changes.js';
import * as m023 from './023_topics.js';
import * as m024 from './024_crawl_runs.js';
import * as m025 from './025_workflow_schedules.js';
import * as m026 from './026_public_page_keys.js';
import * as m027 from './027_pagefind_indexes.js';
import * as m028 from './028_experiments.js';
import * as m029 from './029_search_analytics.js';
import * as m030 from './030_analytics_events.js';
import * as m031 from './031_search_clusters.js';
import * as m032 from './032_recommendation_analytics.js';
import * as m033 from './033_analytics_report_rollups.js';
import * as m034 from './034_rag_analytics.js';
import * as m035 from './035_drop_bm25_statistics_function.js';
import * as m036 from './036_change_log_by_version.js';
import * as m037 from './037_bm25_length_from_terms.js';

interface Migration {
  up(db: Knex): Promise<void>;
  down(db: Knex): Promise<void>;
}

const migrations: Record<string, Migration> = {
  '001_core': m001,
  '002_jobs': m002,
  '003_lexical': m003,
  '004_users': m004,
  '005_datasets': m005,
  '006_chunks': m006,
  '007_search': m007,
  '008_bm25': m008,
  '009_vocabulary': m009,
  '010_recommendations': m010,
  '011_files': m011,
  '012_ingest': m012,
  '013_job_leases': m013,
  '014_bm25_postings': m014,
  '015_bm25_average_length': m015,
  '016_chunk_tag_index': m016,
  '017_drop_lexical_documents': m017,
  '018_dataset_chunk_counts': m018,
  '019_vector_changes': m019,
  '020_held_vector_indexes': m020,
  '021_bm25_statistics_function': m021,
  '022_tag_changes': m022,
  '023_topics': m023,
  '024_crawl_runs': m024,
  '025_workflow_schedules': m025,
  '026_public_page_keys': m026,
  '027_pagefind_indexes': m027,
  '028_experiments': m028,
  '029_search_analytics': m029,
  '030_analytics_events': m030,
  '031_search_clusters': m031,
  '032_recommendation_analytics': m032,
  '033_analytics_report_rollups': m033,
  '034_rag_analytics': m034,
  '035_drop_bm25_statistics_function': m035,
  '036_change_log_by_version': m036,
  '037_bm25_length_from_terms': m037,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name],
};
