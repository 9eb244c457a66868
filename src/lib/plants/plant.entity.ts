import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A row of `plants`. The id is an int64; pg returns int8 as a string, kept exact. */
@Entity({ name: 'plants' })
export class PlantEntity {
  @PrimaryColumn({ type: 'bigint' })
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', nullable: true })
  tag: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
